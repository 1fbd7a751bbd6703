"""May a pipeline read a dataset now? The registry's preflight, failing closed.

    from registry_client import Registry

    answer = Registry.from_env().preflight("analytics.orders", columns=["order_id"])
    if not answer.safe:
        raise SystemExit("\\n".join(answer.reasons))

and on the command line (exit code 0: safe; 1: not safe; 2: wrong usage; 3: the
registry could not answer, which is not safe either):

    registry-preflight analytics.orders --columns order_id,amount --contract 1.x

Anything short of the service saying `safe: true` is unsafe: an unreachable
service, a refused token, an answer that cannot be read, a registry that is a
contract store (S3, a directory) rather than the service.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from registry_client.errors import RegistryClientError

SAFE, UNSAFE, USAGE, NO_ANSWER = 0, 1, 2, 3
UNREACHABLE = "unreachable"


@dataclass(frozen=True)
class PreflightAnswer:
    safe: bool
    status: str
    reasons: list[str]
    incidents: list[dict[str, Any]] = field(default_factory=list)
    as_of: str | None = None
    running: bool = False
    answered: bool = True  # False: the registry could not answer (and so: not safe)

    @classmethod
    def from_json(cls, data: Any) -> PreflightAnswer:
        if not isinstance(data, dict) or not isinstance(data.get("safe"), bool):
            return cls.no_answer("the registry's answer has no boolean `safe`")
        return cls(safe=data["safe"] is True, status=str(data.get("status") or ""),
                   reasons=[str(r) for r in data.get("reasons") or []], incidents=list(data.get("incidents") or []),
                   as_of=data.get("as_of"), running=bool(data.get("running")))

    @classmethod
    def no_answer(cls, why: str) -> PreflightAnswer:
        return cls(safe=False, status=UNREACHABLE, reasons=[why], answered=False)


def ask(backend, name: str, *, namespace: str | None = None, columns: list[str] | None = None,
        contract: str | None = None, dataset_id: int | None = None) -> PreflightAnswer:
    """The preflight through `backend` (the service's HttpBackend); never raises."""
    get_json = getattr(backend, "get_json", None)
    if get_json is None:
        return PreflightAnswer.no_answer(
            f"preflight needs the registry service (an https:// URL); this registry is {backend.describe()}")
    params: dict[str, str] = {"dataset": str(dataset_id)} if dataset_id is not None else {"name": name}
    if namespace:
        params["namespace"] = namespace
    if columns:
        params["columns"] = ",".join(columns)
    if contract:
        params["contract"] = contract
    try:
        return PreflightAnswer.from_json(get_json("preflight", params))
    except (RegistryClientError, ValueError) as exc:  # unreachable, refused, or not JSON: not safe
        return PreflightAnswer.no_answer(str(exc))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="registry-preflight",
        description="Ask the registry whether a dataset is safe to read now. Exit 0: safe; 1: not safe; "
                    "2: wrong usage; 3: the registry could not answer (not safe either).")
    parser.add_argument("name", help="The dataset's name (with --namespace when the name is not unique).")
    parser.add_argument("--namespace", help="The dataset's namespace.")
    parser.add_argument("--columns", help="Comma-separated columns the job reads: only what touches them counts.")
    parser.add_argument("--contract", help="The contract version range the job expects, e.g. 1.x.")
    parser.add_argument("--url", default=os.environ.get("REGISTRY_URL"),
                        help="The registry service, e.g. https://registry.example (default: $REGISTRY_URL).")
    parser.add_argument("--token", default=os.environ.get("REGISTRY_TOKEN"),
                        help="A read token (default: $REGISTRY_TOKEN).")
    parser.add_argument("--timeout", type=float, default=10.0, help="Seconds to wait for the answer (default 10).")
    parser.add_argument("--json", action="store_true", help="Print the answer as JSON.")
    args = parser.parse_args(argv)
    if not args.url:
        parser.error("give the registry service's URL with --url or $REGISTRY_URL")
    from registry_client.backends.http import HttpBackend

    if not args.url.startswith(("http://", "https://")):
        parser.error(f"--url must be the registry service (http:// or https://), not {args.url!r}")
    columns = [c.strip() for c in (args.columns or "").split(",") if c.strip()] or None
    answer = ask(HttpBackend(args.url, args.token, timeout=args.timeout), args.name, namespace=args.namespace,
                 columns=columns, contract=args.contract)
    if args.json:
        print(json.dumps({"safe": answer.safe, "status": answer.status, "reasons": answer.reasons,
                          "incidents": answer.incidents, "as_of": answer.as_of}, indent=2))
    else:
        verdict = "safe" if answer.safe else "NOT SAFE"
        print(f"{args.name}: {verdict} ({answer.status})")
        for reason in answer.reasons:
            print(f"  - {reason}")
        for incident in answer.incidents:
            print(f"  - incident #{incident.get('id')}: {incident.get('summary')}")
    if answer.safe:
        return SAFE
    return UNSAFE if answer.answered else NO_ANSWER


if __name__ == "__main__":
    sys.exit(main())
