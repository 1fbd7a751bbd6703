"""Forms of the contract and dataset pages: the mode, and which datasets a contract describes."""

from __future__ import annotations

import json

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


class DbtImportForm(forms.Form):
    """The dbt import page (governance admins): dbt's artefacts, where their datasets live, and a dry run."""

    manifest = forms.FileField(help_text="dbt's target/manifest.json")
    catalog = forms.FileField(required=False, help_text="dbt's target/catalog.json (`dbt docs generate`): the "
                                                        "columns' types")
    namespace = forms.CharField(required=False, max_length=500,
                                help_text="as dbt-ol names it, e.g. postgres://warehouse:5432 (default: the one "
                                          "lineage already has the project's datasets in)")
    dry_run = forms.BooleanField(required=False, initial=True, label="Dry run: show what would change, store nothing")

    def _json(self, name: str) -> dict | None:
        upload = self.cleaned_data.get(name)
        if upload is None:
            return None
        try:
            value = json.loads(upload.read().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise forms.ValidationError({name: f"{upload.name} is not JSON: {exc}"}) from None
        if not isinstance(value, dict):
            raise forms.ValidationError({name: f"{upload.name} must hold a JSON object (dbt writes one)"})
        return value

    def clean(self) -> dict:
        cleaned = super().clean()
        if not self.errors:
            cleaned["manifest_json"] = self._json("manifest")
            cleaned["catalog_json"] = self._json("catalog")
        return cleaned
