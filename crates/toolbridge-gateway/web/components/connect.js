// The "Connect a client" snippets: the exact config each application reads
// to reach this gateway (checked against each one's documentation), and the
// `toolbridge serve --stdio` forms. Never a token: where one is needed the
// snippet carries a placeholder (or, for a shell command, the variable).
//
// - Claude Desktop: claude_desktop_config.json, "mcpServers" with a
//   command (its config file takes local servers only; remote ones are
//   added as connectors in its settings) -> serve --stdio;
// - Claude Code: `claude mcp add --transport http NAME URL [--header ...]`;
// - Cursor: ~/.cursor/mcp.json or .cursor/mcp.json, "mcpServers" {url, headers};
// - VS Code: .vscode/mcp.json (or the user mcp.json), "servers" {type: "http", url, headers};
// - Windsurf: ~/.codeium/windsurf/mcp_config.json, "mcpServers" {serverUrl, headers};
// - Zed: settings.json, "context_servers" {url, headers}.

const NAME = 'toolbridge';
const PLACEHOLDER = '<token>';

/** A shell word, quoted when it needs to be. */
function sh(word) {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

const json = (value) => JSON.stringify(value, null, 2);

/**
 * The snippets for a client of `url` (`/mcp` or `/mcp/NAME`), `profile`
 * (or null), the gateway's `configPath`, with `token` = {source, variable?}.
 * Each: {id, app, where, text}.
 */
export function snippets({ url, profile, configPath, token }) {
  const needsToken = token.source !== 'none';
  const headers = needsToken ? { Authorization: `Bearer ${PLACEHOLDER}` } : undefined;
  const withHeaders = (entry) => (headers ? { ...entry, headers } : entry);
  const stdioArgs = ['--config', configPath, 'serve', '--stdio', ...(profile ? ['--profile', profile] : [])];
  const shellToken = token.source === 'env' ? `$${token.variable}` : PLACEHOLDER;
  const claudeCode = ['claude', 'mcp', 'add', '--transport', 'http', NAME, url]
    .map(sh).join(' ') + (needsToken ? ` --header "Authorization: Bearer ${shellToken}"` : '');
  return [
    { id: 'claude-desktop', app: 'Claude Desktop', where: 'claude_desktop_config.json',
      text: json({ mcpServers: { [NAME]: { command: 'toolbridge', args: stdioArgs } } }) },
    { id: 'claude-code', app: 'Claude Code', where: 'shell', text: claudeCode },
    { id: 'cursor', app: 'Cursor', where: '~/.cursor/mcp.json',
      text: json({ mcpServers: { [NAME]: withHeaders({ url }) } }) },
    { id: 'vscode', app: 'VS Code', where: '.vscode/mcp.json',
      text: json({ servers: { [NAME]: withHeaders({ type: 'http', url }) } }) },
    { id: 'windsurf', app: 'Windsurf', where: '~/.codeium/windsurf/mcp_config.json',
      text: json({ mcpServers: { [NAME]: withHeaders({ serverUrl: url }) } }) },
    { id: 'zed', app: 'Zed', where: 'settings.json',
      text: json({ context_servers: { [NAME]: withHeaders({ url }) } }) },
    { id: 'stdio', app: 'toolbridge serve --stdio', where: 'shell',
      text: ['toolbridge', ...stdioArgs].map(sh).join(' ') },
  ];
}
