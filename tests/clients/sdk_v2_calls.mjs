// The JS SDK's v2 client (@opencode-ai/sdk 1.19.3, `@opencode-ai/sdk/v2`) against our server. Reads a JSON list
// of calls on stdin, [{as, op, args}] with `op` the client's method path ("v2.session.message") and `as` the
// token to send ("" for none), makes each through the SDK and prints one JSON line: [{status, data, error}].
import { createOpencodeClient } from "sdk119/v2"

const [baseUrl, directory] = process.argv.slice(2)
let input = ""
for await (const chunk of process.stdin) input += chunk
const calls = JSON.parse(input)

function client(token) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {}
  return createOpencodeClient({ baseUrl, directory, headers })
}

async function readStream(stream, count) {
  const seen = []
  const timer = new Promise((resolve) => setTimeout(resolve, 8000))
  const reader = (async () => {
    for await (const event of stream) {
      seen.push(event)
      if (seen.length >= count) break
    }
  })()
  await Promise.race([reader, timer])
  return seen
}

const out = []
for (const call of calls) {
  const sdk = client(call.as)
  const path = call.op.split(".")
  let owner = sdk
  for (const key of path.slice(0, -1)) owner = owner[key]
  const method = owner[path[path.length - 1]]
  if (typeof method !== "function") {
    out.push({ op: call.op, status: -1, error: `no such SDK method: ${call.op}` })
    continue
  }
  try {
    const result = await method.call(owner, call.args, call.options)
    if (call.stream) {
      out.push({ op: call.op, status: 200, data: await readStream(result.stream, call.stream) })
      continue
    }
    let data = result.data
    if (data instanceof Blob) data = await data.text()
    out.push({ op: call.op, status: result.response?.status ?? 0, data: data ?? null, error: result.error ?? null })
  } catch (error) {
    out.push({ op: call.op, status: -2, error: String(error) })
  }
}
console.log(JSON.stringify(out))
process.exit(0)
