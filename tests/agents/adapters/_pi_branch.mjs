// Branches a pi session within its file, as the interactive /tree does, through pi's SDK:
//     node _pi_branch.mjs <pi package dir> <prompt>
// opens the newest session of the current directory, goes back to the parent of its last user
// message (summarising the branch left and labelling the new branch point "branch-point"), and
// sends <prompt> there. The harness runs it as one invocation of the `branch` scenario.
const [pkg, prompt] = process.argv.slice(2);
const { SessionManager, createAgentSession } = await import(pkg + "/dist/index.js");
const sessionManager = SessionManager.continueRecent(process.cwd());
// the model and thinking level are the settings' defaults, as for the CLI
const { session } = await createAgentSession({ sessionManager });
const users = sessionManager.getEntries().filter(e => e.type === "message" && e.message.role === "user");
const result = await session.navigateTree(users[users.length - 1].id, { summarize: true, label: "branch-point" });
console.log(JSON.stringify({ navigate: result }));
await session.prompt(prompt);
console.log(JSON.stringify({ file: session.sessionFile, leaf: sessionManager.getLeafId() }));
process.exit(0);
