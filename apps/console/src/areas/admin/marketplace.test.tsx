import { screen, within } from '@testing-library/react';
import { BrandingProvider } from '../../branding';
import { renderScreen } from '../../../test/render';
import Marketplace from './marketplace';

const WARNINGS = {
  warnings: {
    ProviderA: [{ Level: 'Error', Msg: 'PROVIDERA_PRODUCT_CODE is not set: usage cannot be reported' }],
    ProviderB: [],
    ProviderC: [{ Level: 'Warning', Msg: 'PROVIDERC_CONSUMER_ID is not set' }],
  },
};

const on = (deploymentType: string) =>
  renderScreen(
    <BrandingProvider>
      <Marketplace />
    </BrandingProvider>,
    {
      path: '/admin/marketplace',
      answers: {
        'GET /branding': [200, { appName: 'Platform', primaryColor: '', logo: '', favicons: {}, deploymentType, runMode: 'dev' }],
        'GET /dashboard/marketplaces/subscriptions': [200, []],
        'GET /dashboard/marketplaces/settings/warnings': [200, WARNINGS],
      },
    },
  );

describe("the marketplace screen's settings warnings", () => {
  it('shows an error in red on a marketplace deployment', async () => {
    on('ProviderAMarketplace');
    const table = await screen.findByRole('table', { name: 'ProviderA configuration' });
    expect(within(table).getByText('Error').className).toBe('error');
    expect(screen.queryByText(/is not a marketplace deployment/)).toBeNull();
  });

  it('says on a hosted deployment that the settings do not apply, and shows no error in red', async () => {
    const { container } = on('Hosted');
    expect(await screen.findByText(/This deployment \(Hosted\) is not a marketplace deployment/)).toBeTruthy();
    // Listed for reference, folded away and without alarm.
    const table = screen.getByRole('table', { name: 'ProviderA configuration', hidden: true });
    expect(within(table).getByText('Error').className).toBe('muted');
    expect(container.querySelectorAll('.error')).toHaveLength(0);
    expect(screen.getByText(/No subscriptions: this deployment \(Hosted\) is not a marketplace deployment/)).toBeTruthy();
  });
});
