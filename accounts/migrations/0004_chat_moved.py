# Conversation and ChatMessage now belong to the chat app (chat 0001), their tables kept as
# they are: accounts forgets them in Django's state only. Their content types follow them, so
# permissions and admin history keep pointing at the same rows.

from django.db import migrations

MODELS = ('conversation', 'chatmessage')


def _relabel(apps, old, new):
    ContentType = apps.get_model('contenttypes', 'ContentType')
    moving = ContentType.objects.filter(app_label=old, model__in=MODELS)
    if moving.exists():
        # After a rollback, post_migrate has made fresh, unused rows under the other label.
        ContentType.objects.filter(app_label=new, model__in=MODELS).delete()
        moving.update(app_label=new)


def forwards(apps, schema_editor):
    _relabel(apps, 'accounts', 'chat')


def backwards(apps, schema_editor):
    _relabel(apps, 'chat', 'accounts')


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0003_chat'),
        ('chat', '0001_initial'),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name='ChatMessage'),
                migrations.DeleteModel(name='Conversation'),
            ],
            database_operations=[],
        ),
        migrations.RunPython(forwards, backwards),
    ]
