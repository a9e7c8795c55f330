export { testPostgresUrl, testNatsUrl, createTestDatabase, templateDatabase, MissingServiceError } from './services';
export { eventually } from './eventually';
export { appBundles } from './app-bundles';
export { startPrivateNats, startPrivateNatsCluster, freePort, type PrivateNats, type PrivateNatsCluster } from './private-nats';
export { pdfText } from './pdf-text';
export {
  startAwsMeteringDouble,
  startServiceControlDouble,
  type AwsMeteringDouble,
  type AwsUsageRecord,
  type ServiceControlDouble,
} from './metering-doubles';
export { LogLines, type LogEntry } from './log-lines';
