"""``manage.py api_token <username> [--name NAME]``: create an API token for a user and print it
once (only its hash is stored; when it expires goes to stderr, so ``TOKEN=$(…)`` takes the token
alone). ``manage.py api_token <username> --revoke PREFIX`` revokes that user's token whose list
prefix (``gr_…``, as admin lists it) is PREFIX. Admin creates and revokes them too (API tokens)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from reviewer.models import ApiToken


class Command(BaseCommand):
    help = "Create an API token for a user and print it (it is shown only this once), or revoke one."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="command line", help="What uses it, e.g. “alerting webhook”.")
        parser.add_argument("--revoke", metavar="PREFIX",
                            help="Revoke the user's token with this prefix (its first 10 characters) instead.")

    def handle(self, username, name, revoke, **options):
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise CommandError(f"No active user “{username}”.")
        if revoke is not None:
            row = ApiToken.revoke(user, revoke)
            if row is None:
                raise CommandError(f"“{username}” has no live API token {revoke}….")
            self.stdout.write(f"Revoked the API token {row.prefix}… ({row.name}) of {username}.")
            return
        row, token = ApiToken.issue(user, name[:100])
        self.stdout.write(token)
        self.stderr.write(f"The token expires on {row.expires_text} (API_TOKEN_DAYS).")
