"""``manage.py api_token <username> [--name NAME]``: create an API token for a user and print it
once (only its hash is stored). Admin creates and revokes them too (API tokens)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from reviewer.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for a user and print it (it is shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="command line", help="What uses it, e.g. “alerting webhook”.")

    def handle(self, username, name, **options):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"No active user “{username}”.")
        _, token = ApiToken.issue(user, name[:100])
        self.stdout.write(token)
