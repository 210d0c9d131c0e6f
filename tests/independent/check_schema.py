"""Independent check of agentlog's published schemas, with Python's `jsonschema`.

usage: check_schema.py SCHEMA_DIR UNIFIED_JSONL

Checks that both schema files are valid draft 2020-12 schemas, then validates every line of
UNIFIED_JSONL against event.schema.json (formats such as date-time enforced). Exits non-zero
on the first problem, naming the line and the JSON pointer.
"""

import json
import sys
from pathlib import Path

from jsonschema import Draft202012Validator


def main() -> int:
    schema_dir, jsonl = Path(sys.argv[1]), Path(sys.argv[2])
    schemas = {}
    for name in ("event", "interchange"):
        schema = json.loads((schema_dir / f"{name}.schema.json").read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        schemas[name] = schema
    validator = Draft202012Validator(schemas["event"], format_checker=Draft202012Validator.FORMAT_CHECKER)
    count = 0
    with jsonl.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            errors = sorted(validator.iter_errors(json.loads(line)), key=lambda e: list(e.path))
            if errors:
                e = errors[0]
                print(f"{jsonl}:{number}: /{'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
                return 1
            count += 1
    print(f"schemas valid; {count} lines valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
