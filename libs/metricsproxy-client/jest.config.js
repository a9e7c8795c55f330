module.exports = { ...require('../../jest.preset.js'), displayName: 'metricsproxy-client', rootDir: __dirname };
