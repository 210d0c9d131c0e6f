"""Writes prices.json: the per-token prices agentlog embeds, taken from litellm's model price file.

    pip download litellm==VERSION --no-deps -d /tmp/litellm
    python3 src/cost/extract_prices.py /tmp/litellm/litellm-VERSION-*.whl > src/cost/prices.json

Keeps the Anthropic and OpenAI chat models, with the standard-tier price fields only (no batch,
flex or priority prices), under litellm's own field names and values. Older Anthropic models
that litellm lists only under Amazon Bedrock (`anthropic.claude-sonnet-4-20250514-v1:0`) are
kept under their Anthropic name, at that entry's price, which is Anthropic's list price.
"""

import hashlib
import json
import re
import sys
import zipfile

MEMBER = "litellm/model_prices_and_context_window_backup.json"
FIELD = re.compile(
    r"^(input_cost_per_token|output_cost_per_token|cache_read_input_token_cost"
    r"|cache_creation_input_token_cost(_above_1hr)?)(_above_\d+k_tokens)?$"
)
NAME = re.compile(r"^(claude-|gpt-|o\d|codex)")
BEDROCK = re.compile(r"^anthropic\.(claude-.+)-v\d+:\d+$")


def prices(entry):
    return {k: v for k, v in sorted(entry.items()) if FIELD.match(k) and isinstance(v, (int, float))}


def main(wheel):
    with open(wheel, "rb") as f:
        wheel_sha = hashlib.sha256(f.read()).hexdigest()
    with zipfile.ZipFile(wheel) as z:
        raw = z.read(MEMBER)
        version = re.search(r"litellm-([0-9][^-]*)-", wheel).group(1)
    table = json.loads(raw)
    models = {}
    for name, entry in table.items():
        if not isinstance(entry, dict) or "/" in name or not NAME.match(name):
            continue
        if entry.get("litellm_provider") in ("anthropic", "openai") and entry.get("mode") in ("chat", "responses"):
            kept = prices(entry)
            if "input_cost_per_token" in kept and "output_cost_per_token" in kept:
                models[name] = kept
    for name, entry in table.items():
        m = BEDROCK.match(name)
        if m and isinstance(entry, dict) and m.group(1) not in models:
            kept = prices(entry)
            if "input_cost_per_token" in kept and "output_cost_per_token" in kept:
                models[m.group(1)] = kept
    out = {
        "source": {
            "package": "litellm",
            "version": version,
            "file": MEMBER,
            "sha256": hashlib.sha256(raw).hexdigest(),
            "wheel": wheel.rsplit("/", 1)[-1],
            "wheel_sha256": wheel_sha,
            "url": f"https://pypi.org/project/litellm/{version}/",
        },
        "models": dict(sorted(models.items())),
    }
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1])
