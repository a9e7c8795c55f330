import { loadConfig } from './config';
import { publicLink, publicUrlOf, publicUrlVar } from './public-url';

describe('PUBLIC_URL', () => {
  const read = (value: string) => loadConfig({ PUBLIC_URL: publicUrlVar }, { PUBLIC_URL: value }).PUBLIC_URL;

  it('is an origin, kept with one trailing slash', () => {
    expect(read('https://Platform.Example.com')).toBe('https://platform.example.com/');
    expect(read('http://localhost:8080/')).toBe('http://localhost:8080/');
    expect(read('https://platform.example.com:443/')).toBe('https://platform.example.com/');
  });

  it.each([
    ['ftp://platform.example.com/', /http/],
    ['https://user:pw@platform.example.com/', /credentials/],
    ['https://platform.example.com/platform/', /root of its host/],
    ['https://platform.example.com/?x=1', /root of its host/],
    ['platform.example.com', /URL/],
  ])('refuses %s with a message naming the variable', (value, why) => {
    expect(() => read(value)).toThrow(/PUBLIC_URL/);
    expect(() => read(value)).toThrow(why);
  });

  it('defaults to this machine at the HTTP port, and links are made on it', () => {
    expect(publicUrlOf({})).toBe('http://localhost:8080/');
    expect(publicUrlOf({ HTTP_PORT: 9000 })).toBe('http://localhost:9000/');
    expect(publicUrlOf({ PUBLIC_URL: 'https://p.example/', HTTP_PORT: 9000 })).toBe('https://p.example/');
    expect(publicLink('https://p.example/', '/api/v1/openapi.json')).toBe('https://p.example/api/v1/openapi.json');
    expect(publicLink('https://p.example/', '//evil.example/x')).toBe('https://p.example/evil.example/x');
  });
});
