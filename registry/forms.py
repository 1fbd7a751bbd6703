from django import forms

from registry.constants import DEFAULT_TOKEN_SCOPES, TokenScope
from registry.models import ApiToken, Membership, Team, clean_scopes


class OwnerSelect(forms.Select):
    """Each person's option lists the teams they are in (`data-teams`), so that
    static/js/claim.js offers only the members of the chosen team."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.teams_of: dict[int, list[int]] = {}

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        option["attrs"]["data-teams"] = " ".join(str(pk) for pk in self.teams_of.get(value, []))
        return option


class ClaimForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none())
    owner = forms.TypedChoiceField(coerce=int, widget=OwnerSelect, help_text="A member of the team.")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        teams = Team.objects.of_user(user)
        self.fields["team"].queryset = teams
        self.fields["team"].empty_label = None
        # One query for every person of the user's teams and which of those teams they are in.
        memberships = Membership.objects.filter(team__in=teams).select_related("user").order_by("user__username")
        self.people: dict[int, object] = {}
        teams_of: dict[int, list[int]] = {}
        for membership in memberships:
            self.people[membership.user_id] = membership.user
            teams_of.setdefault(membership.user_id, []).append(membership.team_id)
        self.teams_of = teams_of
        self.fields["owner"].choices = [(pk, person.get_username()) for pk, person in self.people.items()]
        self.fields["owner"].widget.teams_of = teams_of
        self.fields["owner"].initial = user.pk

    def clean(self) -> dict:
        cleaned = super().clean()
        team, owner = cleaned.get("team"), cleaned.get("owner")
        if team is not None and owner is not None:
            if team.pk not in self.teams_of.get(owner, []):
                self.add_error("owner", f"{self.people[owner].get_username()} is not a member of {team.name}; "
                                        f"the owner is a person of the team that claims the dataset.")
            else:
                cleaned["owner"] = self.people[owner]
        return cleaned


class ConsumeForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none())
    columns = forms.CharField(
        required=False, max_length=5000,
        help_text="Optional: the columns your jobs read, comma-separated. A breaking change to other columns "
                  "then only tells your team; leave empty to be asked about every breaking change.")

    def clean_columns(self) -> list[str] | None:
        text = self.cleaned_data["columns"].strip()
        return [c.strip() for c in text.split(",") if c.strip()] if text else None

    def __init__(self, *args, user, dataset, **kwargs):
        super().__init__(*args, **kwargs)
        # The owner team is not offered: it does not consume its own dataset (Dataset.register_consumer).
        self.fields["team"].queryset = Team.objects.of_user(user).exclude(pk=dataset.owner_team_id or 0)
        self.fields["team"].empty_label = None


class ApiTokenForm(forms.ModelForm):
    """The admin's new token: its scopes as checkboxes (stored space-separated)."""

    scopes = forms.MultipleChoiceField(
        choices=TokenScope.choices, initial=list(DEFAULT_TOKEN_SCOPES), widget=forms.CheckboxSelectMultiple,
        help_text="lineage:write posts lineage for the owner's team's datasets and unowned ones; "
                  "lineage:write:any is a platform-wide ingest token.")

    class Meta:
        model = ApiToken
        fields = ["name", "user", "team", "scopes"]

    def clean_scopes(self) -> str:
        return " ".join(clean_scopes(self.cleaned_data["scopes"]))


class TeamsFileForm(forms.Form):
    """The teams page (governance admins): a teams file (docs/teams.md) and a dry run."""

    teams_file = forms.FileField(help_text="a teams file (YAML), as `manage.py sync_teams` reads")
    prune = forms.BooleanField(required=False, label="The file is complete: remove the teams, members and "
                                                     "channels it leaves out")
    dry_run = forms.BooleanField(required=False, initial=True, label="Dry run: show what would change, store nothing")

    def clean(self) -> dict:
        cleaned = super().clean()
        upload = cleaned.get("teams_file")
        if upload is not None:
            try:
                cleaned["text"] = upload.read().decode("utf-8")
            except UnicodeDecodeError:
                raise forms.ValidationError({"teams_file": f"{upload.name} is not UTF-8 text"}) from None
        return cleaned
