module.exports = { ...require('../../jest.preset.js'), displayName: 'local', rootDir: __dirname };
