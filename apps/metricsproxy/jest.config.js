module.exports = { ...require('../../jest.preset.js'), displayName: 'metricsproxy', rootDir: __dirname };
