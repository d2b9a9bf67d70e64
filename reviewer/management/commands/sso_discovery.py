"""``manage.py sso_discovery <issuer>``: reads an OpenID Connect provider's discovery document and
prints the issuer and endpoint settings of single sign-on (docs/operations.md, "Single sign-on") as
environment lines, to paste beside the client's id and secret. Nothing is stored."""

import requests
from django.core.management.base import BaseCommand, CommandError

# setting -> the discovery document's field
FIELDS = {"OIDC_OP_ISSUER": "issuer", "OIDC_OP_AUTHORIZATION_ENDPOINT": "authorization_endpoint",
          "OIDC_OP_TOKEN_ENDPOINT": "token_endpoint", "OIDC_OP_USER_ENDPOINT": "userinfo_endpoint",
          "OIDC_OP_JWKS_ENDPOINT": "jwks_uri"}


class Command(BaseCommand):
    help = "Print the single sign-on endpoint settings of an OpenID Connect provider, from its discovery document."

    def add_arguments(self, parser):
        parser.add_argument("issuer", help="the provider's issuer, e.g. https://sso.example.com/realms/acme")

    def handle(self, issuer, **options):
        url = issuer.rstrip("/") + "/.well-known/openid-configuration"
        try:
            response = requests.get(url, timeout=10)
            response.raise_for_status()
            document = response.json()
        except (requests.RequestException, ValueError) as error:
            raise CommandError(f"Cannot read the discovery document {url}: {error}") from None
        if not isinstance(document, dict):
            raise CommandError(f"{url} is no discovery document (not a JSON object)")
        missing = [name for name in FIELDS.values() if not isinstance(document.get(name), str)]
        if missing:
            raise CommandError(f"{url} does not name: {', '.join(missing)}")
        if document["issuer"].rstrip("/") != issuer.rstrip("/"):
            raise CommandError(f"{url} names another issuer, {document['issuer']!r}: use that one if you trust it")
        for setting, name in FIELDS.items():
            self.stdout.write(f"{setting}={document[name]}")
        if "S256" not in document.get("code_challenge_methods_supported", ["S256"]):
            self.stderr.write("The provider does not list PKCE with S256, which the product sends: check its client "
                              "settings.")
        algorithms = document.get("id_token_signing_alg_values_supported", ["RS256"])
        if isinstance(algorithms, list) and algorithms and "RS256" not in algorithms:  # RS256 is the default
            self.stdout.write(f"OIDC_RP_SIGN_ALGO={algorithms[0]}")
