// build.js: npm's install script. Builds build/snowflake_ids.node from the
// checkout this package lives in (make sdk-node: sdk/bindings.mk), with
// Debian's toolchain and the Node.js headers in /usr/include/node; downloads
// nothing. SNOWFLAKE_SOURCE=/path/to/checkout when the package was copied out
// of it; a package that has its addon already and no checkout uses that.
'use strict';

const { execFileSync } = require('child_process');
const fs = require('fs');
const path = require('path');

const addon = path.join(__dirname, 'build', 'snowflake_ids.node');
const root = process.env.SNOWFLAKE_SOURCE || path.resolve(__dirname, '..', '..');

if (!fs.existsSync(path.join(root, 'sdk', 'bindings.mk'))) {
    if (fs.existsSync(addon)) process.exit(0);
    console.error(`snowflake-ids: no checkout of snowflake at ${root} to build the addon from; ` +
        'set SNOWFLAKE_SOURCE to the checkout (or run `make sdk` there)');
    process.exit(1);
}
// The make of a checkout, not of whatever make started npm.
const env = { ...process.env };
for (const k of ['MAKEFLAGS', 'MFLAGS', 'MAKELEVEL']) delete env[k];
execFileSync('make', ['-C', root, '--no-print-directory', 'sdk-node'], { stdio: 'inherit', env });
// A copy of the package (npm install --install-links) takes the checkout's addon.
const built = path.join(root, 'sdk', 'node', 'build', 'snowflake_ids.node');
if (path.resolve(built) !== path.resolve(addon)) {
    fs.mkdirSync(path.dirname(addon), { recursive: true });
    fs.copyFileSync(built, addon);
}
if (!fs.existsSync(addon)) {
    console.error(`snowflake-ids: make sdk-node did not make ${addon}`);
    process.exit(1);
}
