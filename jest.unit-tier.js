// Set up before every file of the unit tier (TEST_TIER=unit, jest.tiers.js): a unit test starts no child process,
// so that tier stays fast and runs anywhere. A file that spawns one belongs in the integration or e2e tier; this
// says so at the call instead of letting it pass here and wait on another machine. (The database and the bus are
// refused by libs/testing's testPostgresUrl and testNatsUrl.)
const childProcess = require('node:child_process');

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
  childProcess[name] = () => {
    throw new Error(`a unit test started a child process (${name}): a test that needs one is an integration or e2e test (jest.tiers.js)`);
  };
}
