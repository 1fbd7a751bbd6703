from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from registry.models import ApiToken, Team


class Command(BaseCommand):
    help = "Create a bearer token for a user or a team and print its secret (shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("name", help="What the token is for, e.g. 'airflow production'.")
        owner = parser.add_mutually_exclusive_group(required=True)
        owner.add_argument("--user", help="Username that owns the token.")
        owner.add_argument("--team", help="Slug of the team that owns the token.")
        parser.add_argument("--no-lineage", action="store_true", help="The token may not post lineage events.")

    def handle(self, *args, name, user, team, no_lineage, **options):
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
        token, secret = ApiToken.issue(name, can_write_lineage=not no_lineage, **owner)
        self.stderr.write(f"Created token {token} — copy the secret now, it is not stored:")
        self.stdout.write(secret)
