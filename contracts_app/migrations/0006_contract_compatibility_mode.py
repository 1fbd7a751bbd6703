"""Contracts get a compatibility mode of their own, FULL for new contracts.

Existing contracts keep what the gate checked them against before, so nothing
changes under anyone's feet: until now a contract was checked under the modes of
its bound datasets, or BACKWARD when none was bound. A version must now pass the
contract's mode *and* every bound dataset's mode, so an existing contract gets

- BACKWARD when no dataset is bound (the gate's old default);
- otherwise the strongest mode that its datasets' modes already imply together
  (FULL when they ask for both directions, NONE when every one of them is NONE),
  so the contract's mode adds nothing to what they required.

The column is added with the old default for existing rows, the rows are set,
and only then does the default become FULL, for contracts created from now on.
"""

from django.db import migrations, models

MODE_CHOICES = [
    ('NONE', 'None'), ('BACKWARD', 'Backward'), ('BACKWARD_TRANSITIVE', 'Backward transitive'),
    ('FORWARD', 'Forward'), ('FORWARD_TRANSITIVE', 'Forward transitive'), ('FULL', 'Full'),
    ('FULL_TRANSITIVE', 'Full transitive'),
]
HELP = ("What the publish gate checks a new version against (bound datasets may require more). "
        "FULL: producers change first and history is replayed, so both directions count.")


def _requirements(mode):
    # (backward, forward): 0 not checked, 1 against the latest version, 2 against every one.
    base, _, transitive = mode.partition("_")
    depth = 2 if transitive else 1
    return (depth if base in ("BACKWARD", "FULL") else 0, depth if base in ("FORWARD", "FULL") else 0)


def strongest_mode_within(modes):
    """The strongest single mode whose requirements the given modes already impose together."""
    backward = max((_requirements(m)[0] for m in modes), default=0)
    forward = max((_requirements(m)[1] for m in modes), default=0)
    if backward and forward:
        return "FULL_TRANSITIVE" if backward == forward == 2 else "FULL"
    if backward:
        return "BACKWARD_TRANSITIVE" if backward == 2 else "BACKWARD"
    if forward:
        return "FORWARD_TRANSITIVE" if forward == 2 else "FORWARD"
    return "NONE"


def keep_existing_modes(apps, schema_editor):
    Contract = apps.get_model("contracts_app", "Contract")
    DatasetBinding = apps.get_model("contracts_app", "DatasetBinding")
    modes: dict[int, set[str]] = {}
    for contract_id, mode in DatasetBinding.objects.values_list("contract_id", "dataset__compatibility_mode"):
        modes.setdefault(contract_id, set()).add(mode)
    by_mode: dict[str, list[int]] = {}
    for contract_id, bound in modes.items():
        by_mode.setdefault(strongest_mode_within(bound), []).append(contract_id)
    # Unbound contracts already hold BACKWARD, the column's default while it was added.
    for mode, ids in by_mode.items():
        Contract.objects.filter(pk__in=ids).update(compatibility_mode=mode)


class Migration(migrations.Migration):

    dependencies = [
        ('contracts_app', '0005_change_requests_move_out'),
    ]

    operations = [
        migrations.AddField(
            model_name='contract',
            name='compatibility_mode',
            field=models.CharField(choices=MODE_CHOICES, default='BACKWARD', help_text=HELP, max_length=32),
        ),
        migrations.RunPython(keep_existing_modes, migrations.RunPython.noop),
        migrations.AlterField(
            model_name='contract',
            name='compatibility_mode',
            field=models.CharField(choices=MODE_CHOICES, default='FULL', help_text=HELP, max_length=32),
        ),
    ]
