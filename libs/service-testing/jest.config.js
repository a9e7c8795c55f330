module.exports = { ...require('../../jest.preset.js'), displayName: 'service-testing', rootDir: __dirname };
