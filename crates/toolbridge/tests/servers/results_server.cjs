// An MCP server (the official TypeScript SDK, stdio) whose tools return the
// result shapes a client must flatten: only `structuredContent`, an embedded
// text resource, a resource link, binary items (`media`). Node starts in a fraction of a second, so
// tests that run it many times stay quick on a loaded machine.
//
// Run: NODE_PATH=.deps/node/node_modules node results_server.cjs

const { Server } = require("@modelcontextprotocol/sdk/server/index.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");
const {
  CallToolRequestSchema,
  ListToolsRequestSchema,
} = require("@modelcontextprotocol/sdk/types.js");

const noArguments = { type: "object", properties: {} };

const tools = {
  structured_only: {
    description: "A result with no content items, only structured content.",
    result: { content: [], structuredContent: { sum: 3, terms: [1, 2] } },
  },
  embedded_text: {
    description: "A result holding one embedded text resource.",
    result: {
      content: [
        {
          type: "resource",
          resource: {
            uri: "file:///notes/today.txt",
            mimeType: "text/plain",
            text: "buy milk\ncall Ada",
          },
        },
      ],
    },
  },
  resource_link: {
    description: "A result holding a text item and a link to a resource.",
    result: {
      content: [
        { type: "text", text: "the report:" },
        {
          type: "resource_link",
          uri: "file:///reports/q3.pdf",
          name: "q3",
          mimeType: "application/pdf",
        },
      ],
    },
  },
  media: {
    description: "A text item, an image, an audio clip and a binary resource.",
    result: {
      content: [
        { type: "text", text: "three files:" },
        { type: "image", data: Buffer.from("PNG-BYTES").toString("base64"), mimeType: "image/png" },
        { type: "audio", data: Buffer.from("WAV-BYTES").toString("base64"), mimeType: "audio/wav" },
        {
          type: "resource",
          resource: {
            uri: "file:///reports/q3.pdf",
            mimeType: "application/pdf",
            blob: Buffer.from("%PDF-1.7").toString("base64"),
          },
        },
      ],
    },
  },
};

const server = new Server(
  { name: "results-test", version: "1.0.0" },
  { capabilities: { tools: {} } },
);

server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: Object.entries(tools).map(([name, tool]) => ({
    name,
    description: tool.description,
    inputSchema: noArguments,
  })),
}));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const tool = tools[request.params.name];
  if (!tool) {
    return {
      content: [{ type: "text", text: `unknown tool: ${request.params.name}` }],
      isError: true,
    };
  }
  return tool.result;
});

server.connect(new StdioServerTransport());
