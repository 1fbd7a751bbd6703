from django import forms
from django.contrib.auth import get_user_model

from registry.constants import DEFAULT_TOKEN_SCOPES, TokenScope
from registry.models import ApiToken, Team, clean_scopes


class ClaimForm(forms.Form):
    team = forms.ModelChoiceField(queryset=Team.objects.none())
    owner = forms.ModelChoiceField(queryset=get_user_model().objects.none(), help_text="A member of the team.")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        teams = Team.objects.of_user(user)
        self.fields["team"].queryset = teams
        self.fields["team"].empty_label = None
        self.fields["owner"].queryset = get_user_model().objects.filter(teams__in=teams).distinct().order_by("username")
        self.fields["owner"].initial = user.pk


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
