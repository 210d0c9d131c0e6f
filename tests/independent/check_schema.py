"""Independent check of agentlog's published schemas, with Python's `jsonschema`.

usage: check_schema.py SCHEMA_DIR FILE...

Checks that both schema files are valid draft 2020-12 schemas, then validates each FILE: a
`.jsonl` file line by line against event.schema.json, a `.json` file as one document against
interchange.schema.json (formats such as date-time enforced). Exits non-zero on the first
problem, naming the file, the line and the JSON pointer.
"""

import json
import sys
from pathlib import Path

from jsonschema import Draft202012Validator


def main() -> int:
    schema_dir, files = Path(sys.argv[1]), [Path(f) for f in sys.argv[2:]]
    schemas = {}
    for name in ("event", "interchange"):
        schema = json.loads((schema_dir / f"{name}.schema.json").read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema", name
        schemas[name] = schema
    checker = Draft202012Validator.FORMAT_CHECKER
    events = Draft202012Validator(schemas["event"], format_checker=checker)
    documents = Draft202012Validator(schemas["interchange"], format_checker=checker)
    count = 0
    for path in files:
        if path.suffix == ".json":
            items = [(1, json.loads(path.read_text(encoding="utf-8")), documents)]
        else:
            text = path.read_text(encoding="utf-8").splitlines()
            items = [(n, json.loads(line), events) for n, line in enumerate(text, 1)]
        for number, value, validator in items:
            errors = sorted(validator.iter_errors(value), key=lambda e: list(e.path))
            if errors:
                e = errors[0]
                print(f"{path}:{number}: /{'/'.join(map(str, e.path))}: {e.message}", file=sys.stderr)
                return 1
            count += 1
    print(f"schemas valid; {count} lines and documents valid")
    return 0


if __name__ == "__main__":
    sys.exit(main())
