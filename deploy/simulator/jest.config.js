module.exports = { ...require('../../jest.preset.js'), displayName: 'simulator', rootDir: __dirname };
