from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from registry.constants import DEFAULT_TOKEN_SCOPES, TokenScope
from registry.models import ApiToken, RegistryError, Team


class Command(BaseCommand):
    help = "Create a bearer token for a user or a team and print its secret (shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("name", help="What the token is for, e.g. 'airflow production'.")
        owner = parser.add_mutually_exclusive_group(required=True)
        owner.add_argument("--user", help="Username that owns the token.")
        owner.add_argument("--team", help="Slug of the team that owns the token.")
        parser.add_argument("--scope", action="append", dest="scopes", choices=TokenScope.values, metavar="SCOPE",
                            help="What the token may do; repeat for several: " + ", ".join(TokenScope.values)
                                 + f". Default: {' '.join(DEFAULT_TOKEN_SCOPES)}. lineage:write:any makes a "
                                 "platform-wide ingest token, which may write lineage for any dataset.")
        parser.add_argument("--no-lineage", action="store_true", help="The default scopes less lineage:write.")

    def handle(self, *args, name, user, team, scopes, no_lineage, **options):
        owner = {}
        if user:
            try:
                owner["user"] = get_user_model().objects.get(username=user)
            except get_user_model().DoesNotExist:
                raise CommandError(f"No user named {user!r}.") from None
        else:
            try:
                owner["team"] = Team.objects.get(slug=team)
            except Team.DoesNotExist:
                raise CommandError(f"No team with slug {team!r}.") from None
        if scopes is None:
            scopes = [s for s in DEFAULT_TOKEN_SCOPES if not (no_lineage and s == TokenScope.LINEAGE_WRITE)]
        try:
            # The operator running this command is the admin who grants lineage:write:any.
            token, secret = ApiToken.issue(name, scopes=scopes, **owner)
        except RegistryError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        self.stderr.write(f"Created token {token} with scopes {token.scopes} — copy the secret now, it is not stored:")
        self.stdout.write(secret)
