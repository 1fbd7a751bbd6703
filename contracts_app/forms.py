"""Forms of the contract and dataset pages: the mode, and which datasets a contract describes."""

from __future__ import annotations

from django import forms

from contracts_app.models import Contract
from registry.constants import CompatibilityMode
from registry.models import Dataset


class ModeForm(forms.Form):
    compatibility_mode = forms.ChoiceField(choices=CompatibilityMode.choices, label="Compatibility mode")


class BindByNameForm(forms.Form):
    """The contract page: a dataset by its OpenLineage identity."""

    namespace = forms.CharField(max_length=500)
    name = forms.CharField(max_length=500)

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        dataset = Dataset.objects.filter(namespace=cleaned["namespace"], name=cleaned["name"]).first()
        if dataset is None:
            raise forms.ValidationError(
                f"No dataset {cleaned['namespace']}/{cleaned['name']}. A dataset appears when lineage first sees it "
                "or when a published contract document names it.")
        cleaned["dataset"] = dataset
        return cleaned


class BindToContractForm(forms.Form):
    """The dataset page: one of the contracts the person may manage."""

    contract = forms.ModelChoiceField(queryset=Contract.objects.none(), to_field_name="name")

    def __init__(self, *args, user, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["contract"].queryset = Contract.objects.manageable_by(user).order_by("name")
        self.fields["contract"].empty_label = None
