"""A folded name for institution search without an engine: "zurich" finds "ETH Zürich".

The trigram index moves from upper(name) to the folded column on PostgreSQL."""

from django.db import migrations, models

from wovepaper.lib.text import folded_words

BATCH = 2000


def fill_folded_names(apps, schema_editor):
    Institution = apps.get_model("institutions", "Institution")
    last = 0
    while True:
        rows = list(Institution.objects.filter(pk__gt=last).order_by("pk").only("pk", "name")[:BATCH])
        if not rows:
            break
        for row in rows:
            row.folded_name = folded_words(row.name)[:255]
        Institution.objects.bulk_update(rows, ["folded_name"], batch_size=BATCH)
        last = rows[-1].pk


def trigram_on_folded_name(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS institution_name_trgm")
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS institution_folded_name_trgm ON institutions_institution "
            "USING GIN (folded_name gin_trgm_ops)"
        )


def trigram_on_upper_name(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS institution_folded_name_trgm")
        schema_editor.execute(
            "CREATE INDEX IF NOT EXISTS institution_name_trgm ON institutions_institution "
            "USING GIN (upper(name) gin_trgm_ops)"
        )


class Migration(migrations.Migration):
    dependencies = [("institutions", "0004_ror_completion")]

    operations = [
        migrations.AddField(
            model_name="institution",
            name="folded_name",
            field=models.CharField(blank=True, editable=False, max_length=255),
        ),
        migrations.RunPython(fill_folded_names, migrations.RunPython.noop),
        migrations.RunPython(trigram_on_folded_name, trigram_on_upper_name),
    ]
