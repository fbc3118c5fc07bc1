// The JS SDK (@opencode-ai/sdk, v1 client) against our server: prints one JSON line for the pytest side.
import { createOpencodeClient } from "@opencode-ai/sdk"

const [baseUrl, token, directory] = process.argv.slice(2)
const client = createOpencodeClient({ baseUrl, directory, headers: { Authorization: `Bearer ${token}` } })
const out = {}
const events = await client.event.subscribe()
const seen = []
const reader = (async () => {
  for await (const event of events.stream) {
    seen.push(event.type)
    if (event.type === "session.idle") break
  }
})()
const created = await client.session.create({ body: { title: "sdk smoke" } })
out.create = [created.response.status, created.data.title, created.data.directory]
const id = created.data.id
const answer = await client.session.prompt({ path: { id }, body: { parts: [{ type: "text", text: "say hi" }] } })
out.prompt = answer.response.status
out.text = answer.data.parts.filter((p) => p.type === "text").map((p) => p.text).join("")
const messages = await client.session.messages({ path: { id } })
out.messages = messages.data.map((m) => m.info.role)
const providers = await client.config.providers()
out.providers = providers.data.providers.map((p) => p.id)
out.capabilities = Object.values(providers.data.providers[0].models)[0].capabilities
const agents = await client.app.agents()
out.agents = agents.data.map((a) => a.name)
const missing = await client.session.get({ path: { id: "ses_doesnotexist000000000000" } })
out.missing = [missing.response.status, missing.error?.name]
await Promise.race([reader, new Promise((resolve) => setTimeout(resolve, 10000))])
out.events = [...new Set(seen)]
console.log(JSON.stringify(out))
process.exit(0)
