// A benchmark client on the official TypeScript SDK: the same measurements as client_py.py.
//
//     node benchmarks/client.mjs SPEC.json     # JSON on stdout; benchmarks/run.py writes SPEC and reads it
//
// The SDK is not installed here: benchmarks/run.py installs it with npm into a cache directory and names that
// directory in the spec (`node_prefix`), so it is resolved from there.
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(readFileSync(process.argv[2], "utf8"));
const require = createRequire(join(spec.node_prefix, "package.json"));
const load = async (name) => import(pathToFileURL(require.resolve(name)).href);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");
const sdkRoot = require.resolve("@modelcontextprotocol/sdk/client/index.js").split("/dist/")[0];
const version = JSON.parse(readFileSync(join(sdkRoot, "package.json"), "utf8")).version;

function statFields(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

// The server: this process's child (the SDK spawns the command directly, no shell in between).
function childPid() {
  for (const name of readdirSync("/proc")) {
    if (/^\d+$/.test(name) && statFields(name)?.[1] === String(process.pid)) return Number(name);
  }
  return null;
}

function cpuTicks(pid) {
  const fields = pid === null ? null : statFields(pid);
  return fields === null ? null : Number(fields[11]) + Number(fields[12]);
}

function rssKib(pid) {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
    return line ? Number(line.split(/\s+/)[1]) : null;
  } catch {
    return null;
  }
}

const args = (number, total) => ({
  thought: `Thought ${number}: a plain step of reasoning to record.`,
  thoughtNumber: number,
  totalThoughts: total,
  nextThoughtNeeded: number < total,
});

async function call(client, number, total) {
  const result = await client.callTool({ name: spec.tool, arguments: args(number, total) });
  if (result.isError) throw new Error(`${spec.tool} failed: ${JSON.stringify(result.content).slice(0, 300)}`);
}

async function oneServer(server) {
  const started = performance.now();
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: server.env,
    cwd: server.cwd ?? undefined,
    stderr: "inherit",
  });
  const client = new Client({ name: "thinking-hats-benchmark", version: "1.0.0" });
  try {
    await client.connect(transport); // spawns the server and completes `initialize`
    const startup = (performance.now() - started) / 1000;
    await client.listTools(); // the SDK validates each reply against the listed outputSchema, as clients do
    const pid = transport.pid ?? childPid();
    const total = spec.warmup + spec.calls;
    for (let n = 1; n <= spec.warmup; n++) await call(client, n, total);
    const before = cpuTicks(pid);
    const latencies = [];
    const begun = performance.now();
    for (let n = spec.warmup + 1; n <= total; n++) {
      const t = performance.now();
      await call(client, n, total);
      latencies.push((performance.now() - t) / 1000);
    }
    const elapsed = (performance.now() - begun) / 1000;
    const after = cpuTicks(pid);
    return {
      startup_s: startup,
      latencies_s: latencies,
      elapsed_s: elapsed,
      cpu_s: before === null || after === null ? null : (after - before) / spec.clk_tck,
      rss_kib: rssKib(pid),
    };
  } finally {
    await client.close();
  }
}

const results = {};
for (const server of spec.servers) {
  try {
    results[server.name] = await oneServer(server);
  } catch (error) {
    // one server failing is a note in the table, not the end of the run
    results[server.name] = { error: String(error?.stack ?? error).slice(0, 500) };
  }
}
process.stdout.write(JSON.stringify({ client: `@modelcontextprotocol/sdk ${version} (TypeScript)`, results }) + "\n");
