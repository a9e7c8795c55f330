module.exports = { ...require('../../jest.preset.js'), displayName: 'object-storage', rootDir: __dirname };
