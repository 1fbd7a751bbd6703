from __future__ import annotations

from datetime import timedelta

from django import forms

from freshness.rules import exact_duration
from registry.env import parse_duration


class DurationText(forms.CharField):
    """A duration typed as 15m, 6h, 2d or 1w (or a number of seconds)."""

    def to_python(self, value) -> timedelta | None:
        value = super().to_python(value)
        if not value:
            return None
        try:
            return parse_duration(value)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def prepare_value(self, value):
        return exact_duration(value) if isinstance(value, timedelta) else value


class SLOForm(forms.Form):
    max_age = DurationText(required=False, label="Maximum age",
                           help_text="e.g. 6h. Leave empty to remove the SLO.")
    warn_after = DurationText(required=False, label="Warn after", help_text="Optional, e.g. 4h.")
    empty_write_counts = forms.BooleanField(required=False, label="Empty writes count",
                                            help_text="A COMPLETE run that wrote 0 rows refreshes the dataset.")
