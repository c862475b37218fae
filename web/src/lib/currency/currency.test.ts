import { PICKER_CURRENCIES, pickerCurrencies, symbolFor, CURRENCY_SYMBOLS } from './currencies';
import { formatAmount, formatPrice } from './format';

describe('currencies', () => {
  it('lists the 15 picker currencies in order', () => {
    expect(PICKER_CURRENCIES.map((c) => c.code).join(' ')).toBe(
      'USD EUR GBP AUD CAD JPY INR CNY BRL MXN SGD HKD NZD CHF SEK',
    );
  });
  it('adds a chosen currency the picker lacks, after its 15', () => {
    expect(pickerCurrencies('EUR')).toBe(PICKER_CURRENCIES);
    expect(pickerCurrencies('KRW').at(-1)).toEqual({ code: 'KRW', name: 'South Korean Won', symbol: '₩' });
    expect(pickerCurrencies('KRW')).toHaveLength(16);
  });
  it('knows about 45 symbols and shows an unknown code as itself', () => {
    expect(Object.keys(CURRENCY_SYMBOLS).length).toBeGreaterThanOrEqual(45);
    expect(symbolFor('EUR')).toBe('€');
    expect(symbolFor('XYZ')).toBe('XYZ');
  });
});

describe('formatAmount', () => {
  it.each([
    [20, 'USD', '$20'],
    [35.5, 'EUR', '€35.50'],
    [133.3, 'BRL', 'R$133.30'],
    [1234.567, 'GBP', '£1,234.57'],
    [19.999, 'USD', '$20'],
    [3000, 'JPY', '¥3,000'],
    [3127.4, 'JPY', '¥3,127'],
    [12, 'XYZ', 'XYZ12'],
  ])('%d %s reads %s', (amount, code, want) => {
    expect(formatAmount(amount, code)).toBe(want);
  });
});

describe('formatPrice', () => {
  const eur = { code: 'EUR', rate: 0.8659, live: true };
  it('converts with the live rate of the chosen currency', () => {
    expect(formatPrice(45, 'EUR', eur)).toBe('€38.97');
    expect(formatPrice(45, 'GBP', { code: 'GBP', rate: 0.7617, live: true })).toBe('£34.28');
  });
  it('shows currencies without cents in whole units, as checkout charges them', () => {
    expect(formatPrice(20, 'JPY', { code: 'JPY', rate: 156.37, live: true })).toBe('¥3,127');
    expect(formatPrice(45, 'KRW', { code: 'KRW', rate: 1467.3, live: true })).toBe('₩66,029');
  });
  it('shows USD, never a conversion at the fallback rate 1, when rates are unavailable', () => {
    expect(formatPrice(15, 'EUR', { code: 'EUR', rate: 1, live: false })).toBe('$15');
  });
  it("shows USD while the chosen currency's rate is still loading", () => {
    expect(formatPrice(15, 'GBP', eur)).toBe('$15');
  });
});
