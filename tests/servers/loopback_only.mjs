// Preload for Node peers (`node --import <this file> server.js ...`): force every
// `net.Server#listen(port[, cb])` that names no host onto 127.0.0.1.
//
// Why: @modelcontextprotocol/server-everything's HTTP transports call express's
// `app.listen(PORT)`, which binds every interface and has no host option.  trimcp's tests
// keep all traffic on loopback, so we pin the host here instead of patching the package.
// Listens that already name a host (or a path / handle / options object) are left alone.
import net from "node:net";

const HOST = process.env.TRIMCP_BIND_HOST || "127.0.0.1";
const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listen(...args) {
  const first = args[0];
  const isPort =
    typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
  if (isPort && (args.length === 1 || typeof args[1] === "function")) {
    args.splice(1, 0, HOST);
  }
  return originalListen.apply(this, args);
};
