export { healthStatus, reflectedServices } from './grpc-probes';
export { startAppForTest, describeServiceContract, type AppUnderTest } from './service-contract';
