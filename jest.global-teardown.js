module.exports = require('./jest.workers').teardown;
