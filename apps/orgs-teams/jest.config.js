module.exports = { ...require('../../jest.preset.js'), displayName: 'orgs-teams', rootDir: __dirname };
