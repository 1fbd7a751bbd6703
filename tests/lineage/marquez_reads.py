"""Run inside marquez-python's own virtualenv (tests/lineage/marquez_tool.py):
python marquez_reads.py URL TOKEN < [[method, args, kwargs], …] > [result, …].

Each result is {"call": method, "answer": JSON} or, when the client raised,
{"call": method, "status": the HTTP status, "body": the answer's text}."""

import json
import sys

from marquez_client import MarquezClient, errors


def main() -> None:
    url, token = sys.argv[1], sys.argv[2]
    client = MarquezClient(url=url, api_key=token)
    results = []
    for method, args, kwargs in json.load(sys.stdin):
        try:
            results.append({"call": method, "answer": getattr(client, method)(*args, **kwargs)})
        except errors.APIError as exc:
            response = getattr(exc.__cause__, "response", None)
            results.append({"call": method, "status": getattr(response, "status_code", None),
                            "body": getattr(response, "text", repr(exc.__cause__))})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
