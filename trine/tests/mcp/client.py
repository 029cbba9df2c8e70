"""An MCP client trine did not write (the official MCP Python SDK, from PyPI)
against `trine mcp` over stdio, or `trine serve --http` over streamable HTTP.

    python3 client.py stdio TRINE_BIN DATA_DIR TITLE
    python3 client.py http URL TITLE

Prints one JSON object: what each step saw, for the Rust test to check.
"""
import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client


def hits(result):
    return [h["id"] for h in result.structuredContent["hits"]]


async def steps(session, title):
    seen = {}
    init = await session.initialize()
    seen["server"] = init.serverInfo.name
    tools = await session.list_tools()
    seen["tools"] = [t.name for t in tools.tools]
    found = await session.call_tool("search", {"query": title, "tenant": "acme", "limit": 8})
    seen["title_hits"] = hits(found)
    seen["title_text"] = found.content[0].text.splitlines()[1] if found.content else ""
    stored = await session.call_tool(
        "remember",
        {"text": "The quokka migration runbook lives in the ops wiki.", "tenant": "acme"},
    )
    new_id = stored.structuredContent["id"]
    seen["remembered"] = new_id
    query = {"query": "quokka migration runbook", "tenant": "acme", "mode": "lexical"}
    seen["after_remember"] = hits(await session.call_tool("search", query))
    await session.call_tool("forget", {"id": new_id, "tenant": "acme"})
    seen["after_forget"] = hits(await session.call_tool("search", query))
    await session.call_tool("restore", {"id": new_id, "tenant": "acme"})
    seen["after_restore"] = hits(await session.call_tool("search", query))
    wrong = await session.call_tool("get", {"id": new_id, "tenant": "globex"})
    seen["other_tenant_is_error"] = wrong.isError
    return seen


async def main():
    how = sys.argv[1]
    if how == "stdio":
        binary, data, title = sys.argv[2], sys.argv[3], sys.argv[4]
        params = StdioServerParameters(
            command=binary,
            args=["--data", data, "--embedder", "hash", "--log", "error", "mcp"],
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                seen = await steps(session, title)
    else:
        url, title = sys.argv[2], sys.argv[3]
        async with streamablehttp_client(url) as (read, write, _):
            async with ClientSession(read, write) as session:
                seen = await steps(session, title)
    print(json.dumps(seen))


asyncio.run(main())
