from django.db import migrations

# accounts.services.unverified_accounts_expire reads the accounts that never signed in, oldest
# first, every day: a partial index keeps that a short range read at any number of accounts.
# auth_user belongs to django.contrib.auth, so the index is made here by SQL that both
# PostgreSQL and SQLite take.
CREATE = (
    "CREATE INDEX IF NOT EXISTS accounts_user_never_signed_in "
    "ON auth_user (date_joined) WHERE last_login IS NULL"
)
DROP = "DROP INDEX IF EXISTS accounts_user_never_signed_in"


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0004_chat_moved"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [migrations.RunSQL(CREATE, DROP)]
