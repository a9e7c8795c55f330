module.exports = require('./jest.workers').setup;
