module.exports = { ...require('../../jest.preset.js'), displayName: 'agent-protocol', rootDir: __dirname };
