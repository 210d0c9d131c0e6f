"""Writes the synthetic OpenHands conversation of this folder (see README.md).

usage: python3 make.py DIR   (DIR/conversations/<id>/base_state.json and events/)

Record shapes follow the OpenHands software agent SDK v1.21.0 (openhands/sdk/event/, llm/message.py,
llm/utils/metrics.py) and the real files of corpus/recorded/openhands/1.16.0/.
"""
import json, os, sys
root = sys.argv[1]
cid = "0a1b2c3d-4e5f-4071-8293-a4b5c6d7e8f9"
conv = os.path.join(root, "conversations", cid.replace("-", ""))
ev = os.path.join(conv, "events")
os.makedirs(ev, exist_ok=True)
def tu(model, p, c, r, w, reason, rid):
    return {"model": model, "prompt_tokens": p, "completion_tokens": c, "cache_read_tokens": r, "cache_write_tokens": w,
            "reasoning_tokens": reason, "context_window": 200000, "per_turn_token": p + c, "response_id": rid}
agent_usages = [tu("anthropic/claude-sonnet-4-5", 5200, 300, 4000, 1000, 120, "msg_01"),
                tu("anthropic/claude-sonnet-4-5", 6100, 90, 5100, 800, 0, "msg_02"),
                tu("anthropic/claude-sonnet-4-5", 6400, 40, 6000, 100, 0, "msg_03")]
state = {"id": cid,
         "agent": {"llm": {"model": "anthropic/claude-sonnet-4-5", "api_key": "**********", "usage_id": "agent"},
                   "tools": [{"name": "terminal", "params": {}}], "kind": "Agent"},
         "workspace": {"working_dir": "/home/dev/project", "kind": "LocalWorkspace"},
         "persistence_dir": "/home/dev/.openhands/conversations/" + cid.replace("-", ""),
         "max_iterations": 500, "stuck_detection": True, "execution_status": "finished",
         "stats": {"usage_to_metrics": {
             "agent": {"model_name": "anthropic/claude-sonnet-4-5", "accumulated_cost": 0.0456,
                       "accumulated_token_usage": {"model": "anthropic/claude-sonnet-4-5", "prompt_tokens": 17700,
                                                   "completion_tokens": 430, "cache_read_tokens": 15100,
                                                   "cache_write_tokens": 1900, "reasoning_tokens": 120,
                                                   "context_window": 200000, "per_turn_token": 6440, "response_id": ""},
                       # two costs for three responses: they cannot be paired
                       "costs": [{"model": "anthropic/claude-sonnet-4-5", "cost": 0.0301, "timestamp": 1795790000.5},
                                 {"model": "anthropic/claude-sonnet-4-5", "cost": 0.0155, "timestamp": 1795790010.5}],
                       "response_latencies": [], "token_usages": agent_usages},
             "condenser": {"model_name": "openai/gpt-4.1-mini", "accumulated_cost": 0.0012,
                           "accumulated_token_usage": {"model": "openai/gpt-4.1-mini", "prompt_tokens": 2400,
                                                       "completion_tokens": 150, "cache_read_tokens": 0,
                                                       "cache_write_tokens": 0, "reasoning_tokens": 0,
                                                       "context_window": 1047576, "per_turn_token": 2550,
                                                       "response_id": ""},
                           "costs": [{"model": "openai/gpt-4.1-mini", "cost": 0.0012, "timestamp": 1795790020.25}],
                           "response_latencies": [],
                           "token_usages": [tu("openai/gpt-4.1-mini", 2400, 150, 0, 0, 0, "chatcmpl-summary-1")]}}}}
open(os.path.join(conv, "base_state.json"), "w").write(json.dumps(state, separators=(",", ":")))
T = "2026-11-20T10:00:%02d.000001"
def text(t): return {"cache_prompt": False, "type": "text", "text": t}
events = [
    {"id": "e0000000-0000-4000-8000-000000000000", "timestamp": T % 0, "source": "agent",
     "system_prompt": text("You are OpenHands agent."), "tools": [
         {"description": "Run a command.", "action_type": "TerminalAction", "observation_type": "TerminalObservation",
          "annotations": {"title": "terminal"}, "kind": "TerminalTool", "title": "terminal"}],
     "dynamic_context": text("Your current working directory is: /home/dev/project"), "kind": "SystemPromptEvent"},
    {"id": "e0000000-0000-4000-8000-000000000001", "timestamp": T % 1, "source": "user",
     "llm_message": {"role": "user", "content": [text("Look at this screenshot and fix the build."),
                                                  {"cache_prompt": False, "type": "image",
                                                   "image_urls": ["data:image/png;base64,iVBORw0KGgo="]}],
                     "thinking_blocks": []},
     "activated_skills": ["github"], "extended_content": [text("<EXTRA_INFO>The repository uses make.</EXTRA_INFO>")],
     "kind": "MessageEvent"},
    {"id": "e0000000-0000-4000-8000-000000000002", "timestamp": T % 2, "source": "agent",
     "thought": [text("Let me build it.")], "reasoning_content": None,
     "thinking_blocks": [{"type": "thinking", "thinking": "The build is probably make.", "signature": "sig-abc"},
                         {"type": "redacted_thinking", "data": "ENCRYPTED"}],
     "action": {"command": "make", "is_input": False, "reset": False, "kind": "TerminalAction"},
     "tool_name": "terminal", "tool_call_id": "toolu_01",
     "tool_call": {"id": "toolu_01", "name": "terminal", "arguments": "{\"command\": \"make\", \"security_risk\": \"LOW\"}",
                   "origin": "completion"},
     "llm_response_id": "msg_01", "security_risk": "LOW", "kind": "ActionEvent"},
    {"id": "e0000000-0000-4000-8000-000000000003", "timestamp": T % 3, "source": "agent",
     "thought": [], "thinking_blocks": [], "action": None, "tool_name": "no_such_tool", "tool_call_id": "toolu_02",
     "tool_call": {"id": "toolu_02", "name": "no_such_tool", "arguments": "{not json", "origin": "completion"},
     "llm_response_id": "msg_01", "kind": "ActionEvent"},
    {"id": "e0000000-0000-4000-8000-000000000004", "timestamp": T % 4, "source": "environment",
     "tool_name": "terminal", "tool_call_id": "toolu_01",
     "observation": {"content": [text("make: *** No rule to make target 'all'.  Stop.")], "is_error": False,
                     "command": "make", "exit_code": 2, "timeout": False,
                     "metadata": {"exit_code": 2, "pid": -1}, "kind": "TerminalObservation"},
     "action_id": "e0000000-0000-4000-8000-000000000002", "kind": "ObservationEvent"},
    {"id": "e0000000-0000-4000-8000-000000000005", "timestamp": T % 5, "source": "agent",
     "error": "Tool 'no_such_tool' not found. Available: ['terminal']", "tool_name": "no_such_tool",
     "tool_call_id": "toolu_02", "kind": "AgentErrorEvent"},
    {"id": "e0000000-0000-4000-8000-000000000006", "timestamp": T % 6, "source": "agent",
     "thought": [], "thinking_blocks": [],
     "action": {"command": "rm -rf build", "is_input": False, "reset": False, "kind": "TerminalAction"},
     "tool_name": "terminal", "tool_call_id": "toolu_03",
     "tool_call": {"id": "toolu_03", "name": "terminal", "arguments": "{\"command\": \"rm -rf build\", \"security_risk\": \"HIGH\"}",
                   "origin": "completion"},
     "llm_response_id": "msg_02", "security_risk": "HIGH", "kind": "ActionEvent"},
    {"id": "e0000000-0000-4000-8000-000000000007", "timestamp": T % 7, "source": "user",
     "tool_name": "terminal", "tool_call_id": "toolu_03", "rejection_reason": "Do not delete the build folder",
     "rejection_source": "user", "action_id": "e0000000-0000-4000-8000-000000000006", "kind": "UserRejectObservation"},
    {"id": "e0000000-0000-4000-8000-000000000008", "timestamp": T % 8, "source": "user", "kind": "PauseEvent"},
    {"id": "e0000000-0000-4000-8000-000000000009", "timestamp": T % 9, "source": "environment",
     "forgotten_event_ids": ["e0000000-0000-4000-8000-000000000002", "e0000000-0000-4000-8000-000000000003"],
     "summary": "The user wants the build fixed; make has no target all.", "summary_offset": 1,
     "llm_response_id": "chatcmpl-summary-1", "kind": "Condensation"},
    {"id": "e0000000-0000-4000-8000-000000000010", "timestamp": T % 10, "source": "agent",
     "llm_message": {"role": "assistant", "content": [text("The Makefile has no default target.")],
                     "thinking_blocks": []},
     "llm_response_id": "msg_03", "activated_skills": [], "extended_content": [], "kind": "MessageEvent"},
    {"id": "e0000000-0000-4000-8000-000000000011", "timestamp": T % 11, "source": "environment",
     "kind": "ShinyNewEvent", "payload": {"x": 1}},
]
for i, e in enumerate(events):
    open(os.path.join(ev, f"event-{i:05d}-{e['id']}.json"), "w").write(json.dumps(e, separators=(",", ":")))
# a file cut short while it was written
open(os.path.join(ev, "event-00012-e0000000-0000-4000-8000-000000000012.json"), "w").write('{"id":"e0000000-0000-4000-8000-000000000012","timestamp":"2026-11-20T10:00:12","source":"agent","llm_mess')
