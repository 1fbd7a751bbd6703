from django import forms
from django.contrib.auth import get_user_model

from registry.models import Team


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

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = Team.objects.of_user(user)
        self.fields["team"].empty_label = None
