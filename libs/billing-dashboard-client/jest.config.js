module.exports = { ...require('../../jest.preset.js'), displayName: 'billing-dashboard-client', rootDir: __dirname };
