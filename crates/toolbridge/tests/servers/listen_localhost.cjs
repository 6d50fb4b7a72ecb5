// Preloaded into Node servers (`node --require`) by toolbridge's tests:
// forces every TCP listen onto 127.0.0.1 (servers such as server-everything
// listen on all interfaces) and prints `LISTENING <port>` on stderr once the
// socket accepts connections, so tests can use PORT=0 and learn the port.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const callback = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
  let port = args[0];
  if (port !== null && typeof port === "object") port = port.port;
  this.once("listening", () => {
    process.stderr.write(`LISTENING ${this.address().port}\n`);
  });
  return listen.call(this, Number(port) || 0, "127.0.0.1", callback);
};
