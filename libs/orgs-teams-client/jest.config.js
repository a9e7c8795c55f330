module.exports = { ...require('../../jest.preset.js'), displayName: 'orgs-teams-client', rootDir: __dirname };
