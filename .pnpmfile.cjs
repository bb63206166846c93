// node-gyp builds native addons (node-pty, for the CLI's pseudo-terminal test) against the
// headers of the running Node when they are installed beside it, instead of downloading them.
const { existsSync } = require("node:fs");
const { dirname, join } = require("node:path");

const prefix = join(dirname(process.execPath), "..");

module.exports = {
  hooks: {
    updateConfig(config) {
      // biome-ignore lint/suspicious/noUndeclaredEnvVars: read by pnpm at install time, never by a turbo task.
      if (process.env.npm_config_nodedir || !existsSync(join(prefix, "include", "node", "node_version.h")))
        return config;
      return { ...config, extraEnv: { ...config.extraEnv, npm_config_nodedir: prefix } };
    },
  },
};
