module.exports = { ...require('../../jest.preset.js'), displayName: 'authz-client', rootDir: __dirname };
