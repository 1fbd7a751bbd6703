"""The publish service: gate a contract document, decide compatibility, record
the version and put it in the contract store.

Two entry points:

- `record_version(document, by=)` records one version under the immutability
  rules and schedules its upload after the surrounding transaction commits.
  Callers that have already decided to publish (an approved change request)
  call it inside their own transaction.
- `publish_document(document, by=)` is what `publish_contracts` runs per
  document: gates -> immutability -> compatibility -> record -> upload. It
  returns a `PublishOutcome` whose status is one of published / unchanged /
  refused / breaking, with the checker's report.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from packaging.version import InvalidVersion, Version
from registry_client.compat import CompatibilityReport, check_compatibility, version_bump_problem

from contracts_app.gates import validate_document
from contracts_app.hooks import announce_breaking_version, lane_dates_of, version_recorded
from contracts_app.models import (
    AuditAction,
    ContentChanged,
    Contract,
    ContractVersion,
    DatasetBoundElsewhere,
    IntegrationSpec,
    UnknownOwner,
    datasets_named_in,
    document_checksum,
    owner_named_in,
    publisher_refusal,
)
from contracts_app.store import (
    SCHEMA_INDEX_COLUMNS,
    SCHEMA_INDEX_KEY,
    SPEC_INDEX_COLUMNS,
    SPEC_INDEX_KEY,
    Store,
    StoreError,
    contract_key,
    render_csv,
    store_from_settings,
)
from contracts_app.yamlio import dump_plain_yaml
from registry.models import AuditEvent, RegistryError, Team, person_of

log = logging.getLogger(__name__)

PUBLISHED, UNCHANGED, REFUSED, BREAKING = "published", "unchanged", "refused", "breaking"
CONFLICT, FORBIDDEN = "conflict", "forbidden"  # PublishOutcome.code of a refusal
# The mode of a contract not yet recorded (its first version is accepted under any mode).
DEFAULT_MODE = Contract._meta.get_field("compatibility_mode").default
UPLOAD_ATTEMPTS = 3
UPLOAD_BACKOFF_S = 0.5


class PublishRaced(RegistryError):
    """Another publish changed the contract between a document's check and its recording."""

    def __init__(self, message: str):
        super().__init__(message, code=CONFLICT)


class InvalidDocument(RegistryError):
    """The document failed a gate; .errors lists every problem found."""

    def __init__(self, name: str, errors: list[str]):
        self.errors = errors
        super().__init__(f"Refusing to publish {name}: " + "; ".join(errors))


@dataclass
class PublishOutcome:
    name: str
    version: str
    status: str
    message: str
    report: CompatibilityReport | None = None
    contract_version: ContractVersion | None = None
    errors: list[str] = field(default_factory=list)
    dry_run: bool = False
    upload_error: str = ""
    change_request: Any = None  # what holds a breaking version: the listener's change request (or None)
    # Why a refusal is not the document's fault: CONFLICT (the version exists with other
    # content, or another publish changed the contract meanwhile) or FORBIDDEN.
    code: str = ""
    # The published versions the compatibility check compared with (gate_document's), so
    # recording refuses when another publish changed them since (PublishRaced).
    checked_below: list[int] | None = None

    @property
    def ok(self) -> bool:
        return self.status in (PUBLISHED, UNCHANGED) and not self.upload_error

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "version": self.version, "status": self.status, "message": self.message,
            "errors": self.errors, "dry_run": self.dry_run, "upload_error": self.upload_error,
            "report": self.report.to_dict() if self.report else None,
            "change_request": self.change_request.pk if self.change_request else None,
            "code": self.code,
        }


# --- the gates -------------------------------------------------------------------

def gate_errors(document: Any) -> list[str]:
    """Every reason the publish gates refuse `document` (template of its
    schema_type, canonical dtypes, structure), as readable lines."""
    return [f"{p.where}: {p.message}" for p in validate_document(document)]


def _identity(document: dict) -> tuple[str, str]:
    schema = document.get("schema") if isinstance(document, dict) else None
    schema = schema if isinstance(schema, dict) else {}
    return str(schema.get("name") or "<unnamed>"), str(schema.get("version") or "?")


# --- recording -----------------------------------------------------------------

def semantic_order(versions: list[ContractVersion]) -> list[ContractVersion]:
    return sorted(versions, key=lambda v: Version(v.version))


def record_version(document: dict, *, by, yaml_text: str | None = None, store: Store | None = None,
                   checked_below: list[int] | None = None) -> ContractVersion:
    """Record `document` as a published version and schedule its upload.

    1. the gates must pass (InvalidDocument otherwise);
    2. the contract row is created or updated and locked, so two publishers of
       one contract take turns;
    3. the same content under an existing version is a no-op (its upload is
       re-scheduled if an earlier one failed); different content is refused
       (ContentChanged);
    3b. the document's owner must be a team, and `by` must act for the contract's
       current owner team (the named one for a first version; see
       publisher_refusal): UnknownOwner / PermissionDenied otherwise;
    4. a new row and its AuditEvent are written, and the datasets the
       document's `datasets:` section names are bound (created unowned when
       never seen; DatasetBoundElsewhere when another contract describes one);
    5. the upload runs after the caller's transaction commits, never inside it.

    `checked_below` (publish_document's) lists the versions the caller checked
    compatibility against, outside the lock; when another publish has changed
    them since, the version is not recorded (PublishRaced): its check is stale.
    """
    errors = gate_errors(document)
    name, version = _identity(document)
    if errors:
        raise InvalidDocument(name, errors)
    schema = document["schema"]
    with transaction.atomic():
        contract = _upsert_contract(document, by=by)
        existing = ContractVersion.objects.filter(contract=contract, version=version).first()
        if existing is not None:
            if not existing.same_content_as(document):
                raise ContentChanged(
                    f"{name} {version} is already published with different content; published versions are "
                    f"immutable: publish the change as a new version (e.g. {_next_version(version)}).",
                    code=CONFLICT,
                )
            if not existing.is_in_store:
                _schedule_upload(existing.pk, store)
            return existing
        if checked_below is not None and [v.pk for v in published_below(contract, version)] != checked_below:
            raise PublishRaced(
                f"{name} {version}: another version of {name} was published while this one was being checked; "
                "nothing was recorded: publish it again to check it against the versions now published.")
        text = yaml_text if yaml_text is not None else dump_plain_yaml(document)
        checksum = document_checksum(document)
        cv = ContractVersion.objects.create(
            contract=contract, version=version, document=document, checksum=checksum,
            published_by=person_of(by), store_key=contract_key(contract.path_parts, version), yaml_text=text,
        )
        AuditEvent.record(by, AuditAction.VERSION_PUBLISHED, cv, after={
            "contract": name, "version": version, "checksum": checksum, "schema_type": schema["schema_type"],
        })
        contract.bind_named_datasets(document, by=by)
        version_recorded.send(sender=ContractVersion, contract_version=cv, document=document, by=by)
        _schedule_upload(cv.pk, store)
    return cv


def _upsert_contract(document: dict, *, by) -> Contract:
    """Create or lock the contract row; refuse an unknown owner or a publisher who
    may not publish it (checked under the lock, so a concurrent hand-over counts).

    Two first publishes of one contract race for its name:
    1. neither finds a row to lock, so both insert, each in a savepoint;
    2. PostgreSQL makes the second insert wait on the unique index until the
       first transaction ends, then refuses it (IntegrityError);
    3. the loser rolls back its savepoint, locks the winner's row and goes on as
       a later publish of that contract (its version is then the same one, a
       no-op, or a conflict) -- never an error page."""
    schema, meta = document["schema"], document.get("meta") or {}
    named = owner_named_in(document)
    fields = {
        "domain": schema["domain"], "subdomains": list(schema.get("subdomains") or []),
        "entity": schema["entity"], "schema_type": schema["schema_type"], "meta": meta,
        "owner_label": named.slug, "description": schema.get("description") or "", "owner_team": named,
    }
    contract = _locked_contract(schema["name"])
    if contract is None:
        _require_publisher(None, schema["name"], named, by)
        contract = _create_contract(schema["name"], fields, by=by)
        if contract is not None:
            return contract
        contract = _locked_contract(schema["name"])  # another first publish won the name
    _require_publisher(contract, schema["name"], named, by)
    if contract.schema_type != fields["schema_type"]:
        raise ContentChanged(
            f"{contract.name} is a {contract.schema_type} contract; a version cannot change it to {fields['schema_type']}."
        )
    # The contract row reflects its newest version's description, meta and owner.
    latest = semantic_order(list(contract.versions.all()))
    if not latest or Version(schema["version"]) >= Version(latest[-1].version):
        previous_owner = contract.owner_team
        for key, value in fields.items():
            setattr(contract, key, value)
        contract.save()
        if previous_owner != named:
            AuditEvent.record(by, AuditAction.OWNER_CHANGED, contract,
                              before={"owner_team": previous_owner.slug if previous_owner else None},
                              after={"owner_team": named.slug, "version": schema["version"]})
    return contract


def _locked_contract(name: str) -> Contract | None:
    return Contract.objects.select_for_update(of=("self",)).select_related("owner_team").filter(name=name).first()


def _create_contract(name: str, fields: dict, *, by) -> Contract | None:
    """The new contract and its audit row, or None when a concurrent publish created it first."""
    try:
        with transaction.atomic():
            contract = Contract.objects.create(name=name, **fields)
            AuditEvent.record(by, AuditAction.CONTRACT_CREATED, contract,
                              after={"name": contract.name, "schema_type": contract.schema_type})
    except IntegrityError:
        if not Contract.objects.filter(name=name).exists():
            raise  # not the name: some other constraint, a real error
        return None
    return contract


def _require_publisher(contract: Contract | None, name: str, named: Team, by) -> None:
    refusal = publisher_refusal(contract, name, named, by)
    if refusal:
        raise PermissionDenied(refusal)


def publish_refusal(document: Any, *, by) -> str:
    """Why `by` may not publish `document` (a sentence for a 403), or "" when it may.
    An owner that names no team is left to the gate, which refuses it with a 400."""
    name, _ = _identity(document)
    schema = document.get("schema") if isinstance(document, dict) else None
    slug = str((schema or {}).get("owner") or "") if isinstance(schema, dict) else ""
    contract = Contract.objects.filter(name=name).select_related("owner_team").first()
    named = Team.objects.filter(slug=slug).first() if slug else None
    return publisher_refusal(contract, name, named, by)


def _next_version(version: str) -> str:
    try:
        v = Version(version)
    except InvalidVersion:
        return "a higher version"
    return f"{v.major}.{v.minor + 1}" if len(v.release) <= 2 else f"{v.major}.{v.minor}.{v.micro + 1}"


# --- uploading -----------------------------------------------------------------

def _schedule_upload(version_pk: int, store: Store | None) -> None:
    transaction.on_commit(lambda: upload_version(version_pk, store=store))


def _with_retries(action: Callable[[], None], what: str, attempts: int = UPLOAD_ATTEMPTS) -> None:
    delay = UPLOAD_BACKOFF_S
    for attempt in range(1, attempts + 1):
        try:
            action()
            return
        except StoreError as exc:
            if attempt == attempts:
                raise
            log.warning("%s failed (attempt %d of %d), retrying in %.1fs: %s", what, attempt, attempts, delay, exc)
            time.sleep(delay)
            delay *= 2


@contextmanager
def index_writer_lock(index_key: str) -> Iterator[None]:
    """One index writer at a time (PostgreSQL session advisory lock; SQLite
    serializes writers anyway). Without it, two publishers could each rebuild
    the index without the other's new version, and the last write would drop
    one. The lock is held outside any transaction, so no transaction waits on
    the store's I/O."""
    if connection.vendor != "postgresql":
        yield
        return
    key = int.from_bytes(hashlib.sha256(index_key.encode()).digest()[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [key])
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])


def _put_then_reindex(store: Store, *, what: str, key: str, text: str, index_key: str, columns, row: dict,
                      other_rows: Callable[[], list[dict]], mark_uploaded: Callable[[], object]) -> None:
    """Objects first, index last, for versions and specs alike.

    1. put the object (retried);
    2. under the index writer lock, rebuild the index from every row already in
       the store plus this one and put it (retried);
    3. still under the lock, mark the row uploaded, so the next writer's index
       includes it. Raises StoreError when the retries run out."""
    _with_retries(lambda: store.put(key, text.encode()), f"upload of {what}")
    with index_writer_lock(index_key):
        body = render_csv(columns, [*other_rows(), row])
        _with_retries(lambda: store.put(index_key, body, "text/csv"), f"rewrite of {index_key}")
        mark_uploaded()


def upload_version(version_pk: int, *, store: Store | None = None) -> bool:
    """Put one version's YAML in the store, then rewrite the schema index.

    Objects first, index last: the index is rebuilt from every version already
    in the store plus this one, and written only after this one's object is.
    A failure is retried, then recorded on the row (upload_error) and in the
    audit log; the version stays out of the index until an upload succeeds
    (re-running publish_contracts retries it). Returns whether it succeeded.
    """
    store = store or store_from_settings()
    cv = ContractVersion.objects.select_related("contract").get(pk=version_pk)

    def mark_uploaded() -> None:
        with transaction.atomic():
            ContractVersion.objects.filter(pk=cv.pk).update(uploaded_at=timezone.now(), upload_error="")
            AuditEvent.record(None, AuditAction.VERSION_UPLOADED, cv, after={"key": cv.store_key, "store": store.describe()})

    try:
        _put_then_reindex(
            store, what=str(cv), key=cv.store_key, text=cv.yaml_text, index_key=SCHEMA_INDEX_KEY,
            columns=SCHEMA_INDEX_COLUMNS, row=_index_row(cv, lane_dates_of([cv.contract_id])), mark_uploaded=mark_uploaded,
            other_rows=lambda: _index_rows(ContractVersion.objects.in_store().exclude(pk=cv.pk)),
        )
    except StoreError as exc:
        with transaction.atomic():
            ContractVersion.objects.filter(pk=cv.pk).update(upload_error=str(exc))
            AuditEvent.record(None, AuditAction.VERSION_UPLOAD_FAILED, cv, after={"error": str(exc)})
        log.error("upload of %s to %s failed after %d attempts: %s", cv, store.describe(), UPLOAD_ATTEMPTS, exc)
        return False
    return True


def _index_row(cv: ContractVersion, lane_dates: dict) -> dict[str, str]:
    dates = lane_dates.get((cv.contract_id, int(cv.version.split(".", 1)[0])), {})
    return {
        "name": cv.contract.name, "key": cv.store_key, "version": cv.version,
        "date": cv.published_at.date().isoformat(), "schema_type": cv.contract.schema_type,
        "deprecation_date": _iso(dates.get("deprecation_date")), "sunset_date": _iso(dates.get("sunset_date")),
    }


def _iso(day) -> str:
    return day.isoformat() if day else ""


def _index_rows(versions) -> list[dict[str, str]]:
    """The index rows of `versions`, each with its lane's dates (one query for them all)."""
    rows = list(versions.select_related("contract"))
    dates = lane_dates_of({v.contract_id for v in rows})
    return [_index_row(v, dates) for v in rows]


def index_rows() -> list[dict[str, str]]:
    """Every row of the schema index, as the store's CSV and the index API list them."""
    return _index_rows(ContractVersion.objects.in_store().order_by("contract__name", "id"))


def _spec_index_row(spec: IntegrationSpec) -> dict[str, str]:
    return {
        "name": spec.contract_version.contract.name, "key": spec.store_key, "version": spec.version,
        "date": spec.published_at.date().isoformat(), "source_schema": spec.source_schema,
        "source_table": spec.source_table,
    }


def upload_spec(spec_pk: int, *, store: Store | None = None) -> bool:
    """Put one integration spec in the store, then rewrite the spec index."""
    store = store or store_from_settings()
    spec = IntegrationSpec.objects.select_related("contract_version__contract").get(pk=spec_pk)
    others = IntegrationSpec.objects.filter(uploaded_at__isnull=False).exclude(pk=spec.pk)
    try:
        _put_then_reindex(
            store, what=str(spec), key=spec.store_key, text=spec.yaml_text, index_key=SPEC_INDEX_KEY,
            columns=SPEC_INDEX_COLUMNS, row=_spec_index_row(spec),
            mark_uploaded=lambda: IntegrationSpec.objects.filter(pk=spec.pk).update(uploaded_at=timezone.now()),
            other_rows=lambda: [_spec_index_row(s) for s in others.select_related("contract_version__contract")],
        )
    except StoreError as exc:
        log.error("upload of %s to %s failed: %s", spec, store.describe(), exc)
        return False
    return True


# --- deleting ----------------------------------------------------------------------

def _schema_index_rows() -> list[dict[str, str]]:
    return _index_rows(ContractVersion.objects.in_store())


def _spec_index_rows() -> list[dict[str, str]]:
    return [_spec_index_row(s) for s in
            IntegrationSpec.objects.filter(uploaded_at__isnull=False).select_related("contract_version__contract")]


_INDEXES = {
    SCHEMA_INDEX_KEY: (SCHEMA_INDEX_COLUMNS, _schema_index_rows),
    SPEC_INDEX_KEY: (SPEC_INDEX_COLUMNS, _spec_index_rows),
}


def rewrite_index(index_key: str, *, store: Store | None = None) -> bool:
    """Rebuild one index from the rows in the store, under the index writer lock (so
    it never drops a concurrent publish). Returns False, logged, when the store
    refuses after the retries; the next publish rewrites the index from the rows
    again, so it heals then."""
    store = store or store_from_settings()
    columns, rows = _INDEXES[index_key]
    try:
        with index_writer_lock(index_key):
            body = render_csv(columns, rows())
            _with_retries(lambda: store.put(index_key, body, "text/csv"), f"rewrite of {index_key}")
    except StoreError as exc:
        log.error("rewrite of %s in %s failed; the next publish rewrites it: %s", index_key, store.describe(), exc)
        return False
    return True


def delete_version(version: ContractVersion, *, by, store: Store | None = None) -> None:
    """Delete a version nobody depends on (VersionInUse otherwise), audited, and take it
    out of the store's index after commit. Its object stays in the store, out of the
    index: index first, object never, so no reader meets an entry without its object."""
    with transaction.atomic():
        was_in_store = version.is_in_store
        version.delete_unused(by=by)
        if was_in_store:
            transaction.on_commit(lambda: rewrite_index(SCHEMA_INDEX_KEY, store=store))


def delete_spec(spec: IntegrationSpec, *, by, store: Store | None = None) -> None:
    """Delete an integration spec, audited, and take it out of the spec index after commit."""
    with transaction.atomic():
        was_in_store = spec.uploaded_at is not None
        AuditEvent.record(by, AuditAction.SPEC_DELETED, spec, before={
            "contract": spec.contract_version.contract.name, "contract_version": spec.contract_version.version,
            "version": spec.version, "checksum": spec.checksum, "store_key": spec.store_key}, after=None)
        spec.delete()
        if was_in_store:
            transaction.on_commit(lambda: rewrite_index(SPEC_INDEX_KEY, store=store))


# --- the whole publish step for one document -------------------------------------

def compatibility_modes(contract: Contract | None) -> list[str]:
    """The contract's own mode, then the distinct modes of the datasets bound to it.

    A version must pass all of them: a dataset's mode (set by a governance admin in
    the core) can ask for more than its contract, never for less, so changing the
    contract's mode never silently drops what a dataset requires."""
    if contract is None:
        return [DEFAULT_MODE]
    own = contract.compatibility_mode
    bound = sorted({b.dataset.compatibility_mode for b in contract.bindings.select_related("dataset")} - {own})
    return [own, *bound]


def published_below(contract: Contract | None, version: str) -> list[ContractVersion]:
    """The published versions `version` is checked against, in semantic order.

    Every major version is a lane that keeps receiving minor and patch versions: a
    version in an old lane (a newer major is published) is checked against its own
    lane's versions below it, never against the newer major. A version of the newest
    lane, or a new major, is checked against every version below it."""
    if contract is None:
        return []
    proposed = Version(version)
    versions = list(contract.versions.all())
    below = [v for v in versions if Version(v.version) < proposed]
    if any(Version(v.version).major > proposed.major for v in versions):
        below = [v for v in below if Version(v.version).major == proposed.major]
    return semantic_order(below)


def check_in_required_modes(contract: Contract | None, previous_documents: list[dict],
                            document: dict) -> CompatibilityReport:
    """The checker's report for `document` against `previous_documents` in
    every mode required (the contract's own and its bound datasets'; the first
    incompatible report wins; otherwise the contract's own mode's report)."""
    reports = []
    for mode in compatibility_modes(contract):
        reports.append(check_compatibility(previous_documents, document, mode=mode))
        if not reports[-1].compatible:
            return reports[-1]
    return reports[0]


def gate_document(document: dict, *, by) -> PublishOutcome:
    """What publishing `document` as `by` would do, deciding everything and recording nothing.

    The one decision behind both the impact preview and publishing itself (publish_document
    acts on it), so a preview never says something submit then contradicts. In order:

    1. gates (structure, identity, canonical dtypes) -> refused; so is an owner
       that names no team, or a publisher who may not publish the contract
       (publisher_refusal: the current owner team, or an admin);
    2. the version exists: same content -> unchanged, other content -> refused;
    2b. a version number that understates the change (e.g. a minor bump for a
       change that breaks either direction) -> refused, naming the smallest
       version that would do; so is a document naming a dataset another
       contract is bound to;
    3. the checker compares it with the published versions below it -> breaking
       (publishing would open a change request) or published (it would be recorded).

    The outcome is a dry run's; `checked_below` lists the versions the check compared with."""
    name, version = _identity(document)
    errors = gate_errors(document)
    if errors:
        return PublishOutcome(name, version, REFUSED, f"{name} {version}: failed the publish gate", errors=errors,
                              dry_run=True)
    try:
        owner_named_in(document)
    except UnknownOwner as exc:
        return PublishOutcome(name, version, REFUSED, f"{name} {version}: unknown owner", errors=exc.messages,
                              dry_run=True)
    refusal = publish_refusal(document, by=by)
    if refusal:
        return PublishOutcome(name, version, REFUSED, refusal, dry_run=True, code=FORBIDDEN)
    contract = Contract.objects.filter(name=name).first()
    existing = contract.versions.filter(version=version).first() if contract else None
    if existing is not None:
        if existing.same_content_as(document):
            return PublishOutcome(name, version, UNCHANGED, f"{name} {version} is already published with this content",
                                  contract_version=existing, dry_run=True, upload_error=existing.upload_error)
        return PublishOutcome(
            name, version, REFUSED,
            f"{name} {version} is already published with different content; published versions are immutable: "
            f"publish the change as a new version (e.g. {_next_version(version)})",
            errors=["different content under a published version"], contract_version=existing, dry_run=True,
            code=CONFLICT,
        )
    # (a contract not recorded yet asks by its name: any binding of a named dataset is elsewhere)
    clash = (contract or Contract(name=name)).bound_elsewhere(datasets_named_in(document))
    if clash:
        return PublishOutcome(name, version, REFUSED, f"{name} {version}: {clash}", errors=[clash], dry_run=True)
    below = published_below(contract, version)
    report = check_in_required_modes(contract, [v.document for v in below], document)
    latest_below = below[-1] if below else None
    understated = latest_below and version_bump_problem(latest_below.version, version, report)
    if understated:
        return PublishOutcome(
            name, version, REFUSED, f"{name} {version}: {understated} (latest published below it: {latest_below.version})",
            errors=[understated], report=report, dry_run=True,
        )
    checked = [v.pk for v in below]
    if not report.compatible:
        message = (f"{name} {version} breaks {report.mode} compatibility with the published versions "
                   f"({len(report.breaking_changes)} breaking change(s)); it was not published.")
        return PublishOutcome(name, version, BREAKING, message, report=report, dry_run=True, checked_below=checked)
    return PublishOutcome(name, version, PUBLISHED, f"{name} {version} would be published", report=report,
                          dry_run=True, checked_below=checked)


def publish_document(document: dict, *, by, yaml_text: str | None = None, dry_run: bool = False,
                     store: Store | None = None) -> PublishOutcome:
    """Gate, check and publish one document; never raises for a bad document.

    gate_document decides (see its steps); this acts on the decision: an unchanged
    version whose upload failed is uploaded again; a breaking one is announced
    (contracts_app.hooks.breaking_version_proposed: change_requests opens a request that
    waits for the consumer teams) and nothing is recorded yet; a publishable one is
    recorded (record_version), then uploaded after commit. `dry_run` returns the decision."""
    decision = gate_document(document, by=by)
    name, version = decision.name, decision.version
    if decision.status == BREAKING and dry_run:
        decision.message += " Publishing it would open a change request."
    if dry_run or decision.status == REFUSED:
        decision.dry_run = dry_run
        return decision
    decision.dry_run = False
    if decision.status == UNCHANGED:
        existing = decision.contract_version
        if not existing.is_in_store:
            upload_version(existing.pk, store=store)
            existing.refresh_from_db()
            decision.upload_error = existing.upload_error
        return decision
    report = decision.report
    contract = Contract.objects.filter(name=name).first()
    if decision.status == BREAKING:
        request, detail = announce_breaking_version(contract, document, report, by=by)
        decision.message = f"{decision.message} {detail}"
        decision.change_request = request
        return decision
    try:
        cv = record_version(document, by=by, yaml_text=yaml_text, store=store, checked_below=decision.checked_below)
    except (ContentChanged, InvalidDocument, DatasetBoundElsewhere, UnknownOwner, PublishRaced) as exc:
        return PublishOutcome(name, version, REFUSED, " ".join(exc.messages), report=report,
                              code=CONFLICT if getattr(exc, "code", None) == CONFLICT else "")
    except PermissionDenied as exc:  # a concurrent publish gave the contract to another team meanwhile
        return PublishOutcome(name, version, REFUSED, str(exc), report=report, code=FORBIDDEN)
    except RegistryError as exc:  # a listener of version_recorded refused it (e.g. a lane date rule)
        return PublishOutcome(name, version, REFUSED, " ".join(exc.messages), report=report,
                              code=getattr(exc, "code", "") or "")
    cv.refresh_from_db()
    return PublishOutcome(name, version, PUBLISHED, f"{name} {version} published", report=report,
                          contract_version=cv, upload_error=cv.upload_error)
