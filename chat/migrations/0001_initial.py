# Conversation and ChatMessage move here from accounts with their tables as they are: this
# migration only tells Django's state that chat has them (accounts 0004 forgets them), so no
# table is created, renamed or dropped and existing conversations stay.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('accounts', '0003_chat'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Conversation',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('title', models.CharField(max_length=200)),
                        ('scope', models.CharField(blank=True, max_length=80)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('updated_at', models.DateTimeField(auto_now=True)),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='conversations', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'db_table': 'accounts_conversation',
                        'indexes': [models.Index(fields=['user', '-updated_at'], name='conversation_user_idx')],
                    },
                ),
                migrations.CreateModel(
                    name='ChatMessage',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.CharField(choices=[('user', 'user'), ('assistant', 'assistant')], max_length=16)),
                        ('content', models.TextField(blank=True)),
                        ('mode', models.CharField(blank=True, choices=[('pending', 'pending'), ('streaming', 'being made'), ('model', 'model'), ('quoted', 'quoted'), ('nothing', 'nothing found'), ('error', 'error')], max_length=16)),
                        ('citations', models.JSONField(blank=True, default=list)),
                        ('model', models.CharField(blank=True, max_length=128)),
                        ('prompt_tokens', models.PositiveIntegerField(default=0)),
                        ('completion_tokens', models.PositiveIntegerField(default=0)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chat_messages', to=settings.AUTH_USER_MODEL)),
                        ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='messages', to='chat.conversation')),
                    ],
                    options={
                        'db_table': 'accounts_chatmessage',
                        'ordering': ['created_at', 'pk'],
                        'indexes': [
                            models.Index(fields=['conversation', 'created_at'], name='chatmessage_conv_idx'),
                            models.Index(fields=['user', 'role', 'created_at'], name='chatmessage_quota_idx'),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
