from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"
    verbose_name = "Chat with the papers"
    default_auto_field = "django.db.models.BigAutoField"
