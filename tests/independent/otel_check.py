#!/usr/bin/env python3
"""Parses OTLP/JSON trace files (one ExportTraceServiceRequest per line) with the official
protobuf definitions (the opentelemetry-proto package), refusing unknown fields, and checks
what protobuf's JSON mapping cannot: trace and span ids are hex as OTLP/JSON requires (32 and
16 lowercase hex digits), no span is written twice, every parent span is in the same trace (a
session read in several parts may have its spans in several lines), and every span of a line
shares its trace.

usage: otel_check.py FILE...   prints "N requests, M spans: C chat, T execute_tool, A invoke_agent"
"""

import json
import re
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

requests = spans = 0
ids = {}  # trace id -> span ids
parents = []  # (where, trace id, parent span id)
operations = {"chat": 0, "execute_tool": 0, "invoke_agent": 0}
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            where = f"{path}:{number}"
            try:
                json_format.Parse(line, ExportTraceServiceRequest(), ignore_unknown_fields=False)
            except json_format.ParseError as e:
                sys.exit(f"{where}: not an ExportTraceServiceRequest: {e}")
            request = json.loads(line)
            traces = set()
            for resource in request["resourceSpans"]:
                for scope in resource["scopeSpans"]:
                    for span in scope["spans"]:
                        if not re.fullmatch(r"[0-9a-f]{32}", span["traceId"]):
                            sys.exit(f"{where}: trace id {span['traceId']!r} is not 32 hex digits")
                        if not re.fullmatch(r"[0-9a-f]{16}", span["spanId"]):
                            sys.exit(f"{where}: span id {span['spanId']!r} is not 16 hex digits")
                        trace = ids.setdefault(span["traceId"], set())
                        if span["spanId"] in trace:
                            sys.exit(f"{where}: span id {span['spanId']} twice")
                        trace.add(span["spanId"])
                        traces.add(span["traceId"])
                        if "parentSpanId" in span:
                            parents.append((where, span["traceId"], span["parentSpanId"]))
                        if int(span["startTimeUnixNano"]) > int(span["endTimeUnixNano"]):
                            sys.exit(f"{where}: span {span['spanId']} ends before it starts")
                        attributes = {a["key"]: a["value"] for a in span["attributes"]}
                        operation = attributes["gen_ai.operation.name"]["stringValue"]
                        operations[operation] += 1
                        spans += 1
            if len(traces) != 1:
                sys.exit(f"{where}: {len(traces)} traces in one session's request")
            requests += 1
if requests == 0:
    sys.exit("no requests")
for where, trace, parent in parents:
    if parent not in ids[trace]:
        sys.exit(f"{where}: parent span {parent} is not in the trace")
print(f"{requests} requests, {spans} spans: {operations['chat']} chat, {operations['execute_tool']} execute_tool, "
      f"{operations['invoke_agent']} invoke_agent")
